package fusefrontend

import (
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fs"

	"gocryptfs/internal/inomap"
)

// Inode numbers that come back. The node ID the kernel knows an inode by
// is the inode number the mount shows (mountopts: ExternalNodeID, for
// file handles), and backing filesystems hand a freed inode number out
// again at once (ext4 takes the lowest free one). The kernel may still
// hold the inode of a removed entry when its number comes back: the
// process that unlinked it is still in unlink(2) (the ctime SETATTR the
// kernel sends after every unlink under the writeback cache), a RELEASE is
// under way, an O_PATH descriptor or a racing open(2) holds it. A new
// entry that came back under the same node ID was taken by the kernel for
// the old inode (fuse_iget): the new file inherited what the kernel keeps
// in that inode, its cached size and pages (under the writeback cache the
// kernel trusts its own size), its times, and the write error recorded on
// its mapping, which the next close(2) of the new file returned as EIO
// (issue 19, finding 4: four users creating, unlinking and making
// directories, one close in about 400 failed). A new generation number
// for the same node ID would not do: the kernel then marks the old inode
// bad, and an open(2) racing the removal fails with EIO instead of ENOENT.
//
// So an entry that the mount creates with a new inode whose number is
// still held by the node of a removed entry is shown under a number of
// its own from inomap's spill range, for as long as the mount lives (or
// until that entry is removed and its node forgotten); the kernel sees a
// new node ID. The table holds only these exceptions, so it stays small
// however many nodes the kernel knows:
//   - dead: shown numbers of entries removed through the mount (unlink,
//     rmdir, rename over) whose nodes go-fuse still has, until go-fuse
//     forgets the node;
//   - remap: backing-derived number -> number shown instead, with the
//     reverse in back.
//
// Entries removed behind the mount's back (another mount, a sync tool)
// are not seen here. A remapped entry shows its own number again after a
// remount (a file handle of it is then stale, as one of a deleted file).
type inoReuse struct {
	mu    sync.Mutex
	size  atomic.Int32 // len(dead)+len(remap): lookups skip the lock at 0
	dead  map[uint64]struct{}
	remap map[uint64]uint64
	back  map[uint64]uint64
}

// maxReuseEntries bounds the table. Past it, knowledge of removed nodes
// is dropped (a forgetting that go-fuse never reported must not grow it
// forever).
const maxReuseEntries = 1 << 16

// shown returns the number to show for the backing-derived number ino.
func (r *inoReuse) shown(ino uint64) uint64 {
	if r.size.Load() == 0 {
		return ino
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.remap[ino]; ok {
		return s
	}
	return ino
}

// fresh returns the number to show for an entry that was just created
// with a new inode whose backing-derived number is ino: ino, unless the
// node of a removed entry still holds the number ino (or the number ino
// was last shown as), then a new one from inos.
func (r *inoReuse) fresh(ino uint64, inos *inomap.Map) uint64 {
	if r.size.Load() == 0 {
		return ino
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, mapped := r.remap[ino]
	if !mapped {
		cur = ino
	}
	_, held := r.dead[cur]
	if !held && mapped {
		// The earlier incarnation's number is free; is the plain one?
		_, held = r.dead[ino]
		if !held {
			r.unmapLocked(ino)
			return ino
		}
	}
	if !held {
		return ino
	}
	if mapped {
		delete(r.back, cur)
	}
	s := inos.NextSpill()
	if r.remap == nil {
		r.remap = make(map[uint64]uint64)
		r.back = make(map[uint64]uint64)
	}
	if len(r.remap) >= maxReuseEntries {
		return ino // full: as before this table existed
	}
	r.remap[ino] = s
	r.back[s] = ino
	r.resize()
	return s
}

// removed records that the entry of node ch (nil: the kernel never
// looked it up, nothing to record) was removed through the mount.
func (r *inoReuse) removed(ch *fs.Inode) {
	if ch == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead == nil {
		r.dead = make(map[uint64]struct{})
	}
	if len(r.dead) >= maxReuseEntries {
		for k := range r.dead {
			delete(r.dead, k)
			break
		}
	}
	r.dead[ch.StableAttr().Ino] = struct{}{}
	r.resize()
}

// forgotten records that go-fuse dropped the node with shown number ino:
// the kernel holds no inode under it any more.
func (r *inoReuse) forgotten(ino uint64) {
	if r.size.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.dead[ino]; !ok {
		return
	}
	delete(r.dead, ino)
	if orig, ok := r.back[ino]; ok {
		// A removed remapped entry: its number is no longer needed.
		r.unmapLocked(orig)
	}
	r.resize()
}

func (r *inoReuse) unmapLocked(ino uint64) {
	if s, ok := r.remap[ino]; ok {
		delete(r.back, s)
		delete(r.remap, ino)
	}
	r.resize()
}

func (r *inoReuse) resize() {
	r.size.Store(int32(len(r.dead) + len(r.remap)))
}

var _ = (fs.NodeOnForgetter)((*Node)(nil))

// OnForget is called by go-fuse when it drops the node.
func (n *Node) OnForget() {
	n.rn.reuse.forgotten(n.StableAttr().Ino)
}
