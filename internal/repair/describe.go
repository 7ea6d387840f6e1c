package repair

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/nametransform"
)

// kindNames are the -json kinds of the fsck problem kinds (FileError is
// refined by Analyze).
var kindNames = map[fsck.Kind]string{
	fsck.CorruptName:     "undecryptable-name",
	fsck.DirError:        "dir-error",
	fsck.FileError:       "file-error",
	fsck.OpenError:       "open-error",
	fsck.SymlinkError:    "undecryptable-symlink",
	fsck.XattrListError:  "xattr-list-error",
	fsck.XattrNameError:  "undecryptable-xattr-name",
	fsck.XattrValueError: "undecryptable-xattr-value",
	fsck.Skipped:         "skipped",
	fsck.OrphanLongName:  "orphan-long-name-file",
}

// Describe turns an fsck problem into a "finding" event; for a file it
// reads the ciphertext to tell the kind of damage and the byte ranges
// affected.
func Describe(cipherDir string, ce *contentenc.ContentEnc, p fsck.Problem) Event {
	e := Event{Type: "finding", Kind: kindNames[p.Kind], Path: p.Path, CipherPath: p.CipherPath, Line: p.String()}
	if e.Kind == "" {
		e.Kind = fmt.Sprintf("kind-%d", int(p.Kind))
	}
	if p.Err != nil {
		e.Error = p.Err.Error()
	}
	switch {
	case p.Kind == fsck.DirError && p.Name == nametransform.DirIVFilename:
		e.Kind = "diriv-missing"
		if !errors.Is(p.Err, os.ErrNotExist) {
			e.Kind = "diriv-invalid"
		}
	case p.Kind == fsck.CorruptName && strings.HasPrefix(filepath.Base(p.CipherPath), nametransform.LongNamePrefix):
		e.Kind = "long-name-file-damaged"
	case p.Kind == fsck.FileError:
		f, err := os.OpenFile(filepath.Join(cipherDir, p.CipherPath), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		if err != nil {
			break
		}
		defer f.Close()
		if d, err := Analyze(ce, f); err == nil {
			e.Kind = d.Kind()
			e.Ranges = d.LostRanges(ce)
		}
	}
	return e
}

// ErrMounted is wrapped by CheckNotMounted's error when the CIPHERDIR is
// mounted.
var ErrMounted = errors.New("CIPHERDIR is mounted")

// CheckNotMounted fails with ErrMounted if table (the content of
// /proc/self/mountinfo) lists a FUSE mount whose source is cipherDir, as
// both gocryptfs implementations name their mounts after the absolute
// CIPHERDIR. Repairing under a running mount would race with it.
func CheckNotMounted(cipherDir string, table io.Reader) error {
	want := []string{filepath.Clean(cipherDir)}
	if real, err := filepath.EvalSymlinks(cipherDir); err == nil && real != want[0] {
		want = append(want, real)
	}
	mounts, err := mountinfo.Parse(table)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.FSType != "fuse" && !strings.HasPrefix(m.FSType, "fuse.") {
			continue
		}
		for _, w := range want {
			if filepath.Clean(m.Source) == w {
				return fmt.Errorf("%w on %s: unmount it first", ErrMounted, m.MountPoint)
			}
		}
	}
	return nil
}
