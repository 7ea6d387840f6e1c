package fusefrontend

import (
	"context"
	"io"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// READDIRPLUS: the kernel asks for a directory listing together with the
// attributes of every entry, which go-fuse answers by calling a lookup per
// entry. A regular Lookup would walk to the parent again, encrypt the name
// that was just decrypted, and stat it. The listing already knows each
// entry's backing name and holds the backing directory open, so its lookup
// is a single fstatat (plus a readlinkat for symlinks, whose shown size is
// the decrypted target's length).

// listing is the decrypted content of one backing directory: a DirStream
// for go-fuse that also answers lookups of the names it produced.
type listing struct {
	n      *Node
	dfd    int             // the backing directory, open until Close
	ents   []fuse.DirEntry // shown entries
	cNames []string        // backing name of each entry of ents
	idx    int             // next entry to produce
	closed bool
	// borrowed: dfd belongs to the open directory handle (plusDir),
	// which closes it.
	borrowed bool
}

var (
	_ = (fs.DirStream)((*listing)(nil))
	_ = (fs.FileSeekdirer)((*listing)(nil))
)

// HasNext reports whether Next has more entries.
func (l *listing) HasNext() bool { return l.idx < len(l.ents) }

// Next returns the next entry; its offset is the index after it.
func (l *listing) Next() (fuse.DirEntry, syscall.Errno) {
	e := l.ents[l.idx]
	l.idx++
	e.Off = uint64(l.idx)
	return e, 0
}

// Seekdir moves to the entry after offset off.
func (l *listing) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if off > uint64(len(l.ents)) {
		return syscall.EINVAL
	}
	l.idx = int(off)
	return 0
}

// Close releases the backing directory fd.
func (l *listing) Close() {
	if !l.closed {
		l.closed = true
		if !l.borrowed {
			syscallcompat.Close(l.dfd)
		}
	}
}

// lookup answers the READDIRPLUS lookup of name, which normally is the
// entry produced last; any other name (a replayed, interrupted listing)
// takes the regular Lookup.
func (l *listing) lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	i := l.idx - 1
	if l.closed || i < 0 || i >= len(l.ents) || l.ents[i].Name != name {
		return l.n.Lookup(ctx, name, out)
	}
	rn := l.n.rn
	rn.enter("ReaddirplusLookup")
	cName := l.cNames[i]
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(l.dfd, cName, &st); err != nil {
		return nil, l.n.toErrno("ReaddirplusLookup", err)
	}
	rn.fillAttr(&st, l.dfd, cName, &out.Attr)
	return l.n.newChild(ctx, &st), 0
}

// plusDir is an open directory handle: the listing, read on first use and
// again on rewind, with lookups for READDIRPLUS.
type plusDir struct {
	n  *Node
	fd int // the backing directory (dirhandle.go)
	mu sync.Mutex
	ds fs.DirStream
	// listed: fd was read by a listing, so it must be rewound before
	// the next.
	listed bool
}

var (
	_ = (fs.NodeOpendirHandler)((*Node)(nil))
	_ = (fs.FileReaddirenter)((*plusDir)(nil))
	_ = (fs.FileSeekdirer)((*plusDir)(nil))
	_ = (fs.FileReleasedirer)((*plusDir)(nil))
	_ = (fs.FileLookuper)((*plusDir)(nil))
)

// stream returns the listing, reading the directory on first use.
func (d *plusDir) stream(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if d.ds == nil {
		// The listing reads the handle's own fd (readDirFd); any
		// attempt, also a failed one, may have moved its offset.
		if d.listed {
			if _, err := unix.Seek(d.fd, 0, io.SeekStart); err != nil {
				return nil, d.n.toErrno("Readdir", err)
			}
		}
		d.listed = true
		ds, errno := d.n.readdir(d.fd)
		if errno != 0 {
			return nil, errno
		}
		d.ds = ds
	}
	return d.ds, 0
}

// Readdirent returns the next entry, or nil at the end.
func (d *plusDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ds, errno := d.stream(ctx)
	if errno != 0 || !ds.HasNext() {
		return nil, errno
	}
	e, errno := ds.Next()
	return &e, errno
}

// Seekdir repositions the listing; offset 0 (rewinddir) reads the
// directory afresh, as getdents does on a local filesystem.
func (d *plusDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off == 0 && d.ds != nil {
		d.ds.Close()
		d.ds = nil
	}
	ds, errno := d.stream(ctx)
	if errno != 0 {
		return errno
	}
	if sd, ok := ds.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

// Releasedir closes the listing and the backing fd.
func (d *plusDir) Releasedir(ctx context.Context, releaseFlags uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ds != nil {
		d.ds.Close()
		d.ds = nil
	}
	d.n.rn.openDirs.remove(d.n, d)
	syscallcompat.Close(d.fd)
}

// Lookup answers a READDIRPLUS lookup from the listing.
func (d *plusDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	defer fuseutil.Recover(d.n.rn.log, "Lookup", &errno)
	d.mu.Lock()
	defer d.mu.Unlock()
	if l, ok := d.ds.(*listing); ok {
		return l.lookup(ctx, name, out)
	}
	return d.n.Lookup(ctx, name, out)
}
