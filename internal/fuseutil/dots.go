package fuseutil

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// DotEntries returns the "." and ".." entries that start every directory
// listing of a local filesystem (programs count entries and compare them,
// e.g. after rewinddir). dir is the listed directory's inode; ".." of the
// root is the root itself, as on any mounted filesystem, and so is that of
// a directory that no longer has a parent in the tree (it was removed or
// replaced while open).
func DotEntries(dir *fs.Inode) []fuse.DirEntry {
	self := dir.StableAttr().Ino
	parent := self
	if _, p := dir.Parent(); p != nil {
		parent = p.StableAttr().Ino
	}
	return []fuse.DirEntry{
		{Name: ".", Mode: syscall.S_IFDIR, Ino: self},
		{Name: "..", Mode: syscall.S_IFDIR, Ino: parent},
	}
}
