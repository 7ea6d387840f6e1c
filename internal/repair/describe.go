package repair

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Describe turns an fsck problem into a "finding" event; for a file it
// reads the ciphertext (below rootFd, the open CIPHERDIR, without
// following symlinks, regular files only) to tell the kind of damage and
// the byte ranges affected.
func Describe(rootFd int, ce *contentenc.ContentEnc, p fsck.Problem) Event {
	e := Event{Type: "finding", Kind: p.Kind.String(), Path: p.Path, CipherPath: p.CipherPath, Line: p.String()}
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
		dir, name := split(p.CipherPath)
		dfd, err := syscallcompat.OpenDirBeneath(rootFd, dir)
		if err != nil {
			break
		}
		fd, err := syscallcompat.OpenFileAt(dfd, name, unix.O_RDONLY)
		syscallcompat.Close(dfd)
		if err != nil {
			break
		}
		f := os.NewFile(uintptr(fd), p.CipherPath)
		defer f.Close()
		if d, err := Analyze(ce, f); err == nil {
			e.Kind = d.Kind()
			e.Ranges = d.LostRanges(ce)
		}
	}
	return e
}
