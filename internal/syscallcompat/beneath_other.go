//go:build !linux

package syscallcompat

// openDirBeneath is OpenDirBeneath. Without openat2 (Linux only) it is
// always the component-wise O_NOFOLLOW walk; useOpenat2 is ignored.
func openDirBeneath(baseFd int, rel string, useOpenat2 bool) (int, error) {
	if err := CheckRelPath(rel); err != nil {
		return -1, err
	}
	if rel == "" {
		return OpenDirAt(baseFd, ".")
	}
	return WalkDirs(baseFd, rel)
}
