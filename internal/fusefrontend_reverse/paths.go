package fusefrontend_reverse

import (
	"fmt"
	"strings"
	"syscall"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// cleanRel strips leading and trailing slashes and empty components.
func cleanRel(p string) []string {
	var comps []string
	for c := range strings.SplitSeq(p, "/") {
		if c != "" && c != "." {
			comps = append(comps, c)
		}
	}
	return comps
}

// EncryptPath translates a plaintext path relative to PLAINDIR into the
// path of the same entry in the view (for the control socket). It is
// computed from the derived directory IVs alone; the entry need not exist.
// Long names are returned hashed, the root's .gocryptfs.reverse.conf as
// gocryptfs.conf.
func (rn *RootNode) EncryptPath(plainPath string) (string, error) {
	var cDir, pDir string
	for _, comp := range cleanRel(plainPath) {
		if comp == ".." {
			return "", fmt.Errorf("EncryptPath %q: %w", plainPath, syscall.EINVAL)
		}
		stored, _, _, err := rn.viewName(pDir, cDir, comp)
		if err != nil {
			return "", fmt.Errorf("EncryptPath %q: %w", plainPath, err)
		}
		cDir = joinPath(cDir, stored)
		pDir = joinPath(pDir, comp)
	}
	return cDir, nil
}

// DecryptPath translates a path in the view into the plaintext path
// relative to PLAINDIR (for the control socket). Names are decrypted with
// the derived directory IVs; hashed long names are resolved by listing the
// plaintext directory, which must therefore exist. Virtual files
// (gocryptfs.diriv, .name files) have no plaintext path (ENOENT);
// gocryptfs.conf in the root maps to .gocryptfs.reverse.conf.
func (rn *RootNode) DecryptPath(cipherPath string) (string, error) {
	var cDir, pDir string
	for _, comp := range cleanRel(cipherPath) {
		pName, err := rn.plainName(pDir, cDir, comp)
		if err != nil {
			return "", fmt.Errorf("DecryptPath %q: %w", cipherPath, err)
		}
		cDir = joinPath(cDir, comp)
		pDir = joinPath(pDir, pName)
	}
	return pDir, nil
}

// plainName returns the plaintext name of the view entry name in the
// directory (pDir, cDir). Only hashed long names need the plaintext
// directory (to find the entry whose name hashes to it). Virtual files have
// no plaintext name (ENOENT).
func (rn *RootNode) plainName(pDir, cDir, name string) (string, error) {
	var r resolved
	var err error
	if !rn.nt.PlaintextNames() && (nametransform.IsLongContent(name) || nametransform.IsLongNameFile(name)) {
		err = rn.at(pDir, func(dirfd int, dname string) error {
			fd, err := syscallcompat.OpenDirAt(dirfd, dname)
			if err != nil {
				return err
			}
			defer syscallcompat.Close(fd)
			r, err = rn.resolveName(fd, pDir, cDir, name, false)
			return err
		})
	} else {
		r, err = rn.resolveName(-1, pDir, cDir, name, false)
	}
	if err != nil {
		return "", err
	}
	switch r.kind {
	case entryDirIV, entryNameFile:
		return "", fmt.Errorf("%q is a virtual file: %w", name, syscall.ENOENT)
	}
	return r.pName, nil
}
