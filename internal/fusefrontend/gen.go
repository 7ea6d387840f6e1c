package fusefrontend

import (
	"sync"
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fs"
)

// FUSE generation numbers. The node ID the kernel knows an inode by is the
// inode number the mount shows (mountopts: ExternalNodeID, for file
// handles), and backing filesystems hand a freed inode number out again
// at once (ext4 takes the lowest free one). The kernel may still hold the
// inode of a removed entry when the number comes back: the process that
// unlinked it is still in unlink(2) (the ctime SETATTR the kernel sends
// after every unlink under the writeback cache), a RELEASE is under way,
// an O_PATH descriptor pins it. If a new entry then came back with the
// same node ID and the same generation, the kernel would take it for the
// old inode (fuse_iget) and the new file would inherit what the kernel
// keeps in that inode: its cached size and pages (under the writeback
// cache the kernel trusts its own size), its times, and the write error
// recorded on its mapping, which the next close(2) of the new file
// returned as EIO (issue 19, finding 4: four users creating, unlinking and
// making directories, one close in about 400 failed).
//
// So an entry that is created through the mount gets a generation that
// differs from that of any node the kernel may still hold for its inode
// number: the kernel then marks the old inode stale and makes a new one.
// Lookups of existing entries give the generation the entry was given.
// Most entries never need anything but generation 1, and the table only
// holds the exceptions, so it stays small however many nodes the kernel
// knows:
//   - dead: inode numbers of entries removed through the mount (unlink,
//     rmdir, rename over) whose nodes go-fuse still has, with their
//     generation, until go-fuse forgets the node;
//   - gens: inode numbers whose current entry has a generation other than
//     1, until that entry is removed and its node forgotten.
//
// Entries removed behind the mount's back (another mount, a sync tool)
// are not seen here, and the generations are per mount: a file handle
// of an entry that needed a generation other than 1 is stale after a
// remount, as one of a deleted file is.
type genTable struct {
	mu   sync.Mutex
	size atomic.Int32 // len(dead)+len(gens): lookups skip the lock at 0
	dead map[uint64]uint64
	gens map[uint64]uint64
}

// maxGenEntries bounds each map. Past it the oldest knowledge is not
// kept: a removed node whose forgetting was never reported must not grow
// the table forever.
const maxGenEntries = 1 << 16

// current returns the generation of the existing entry with inode number
// ino.
func (g *genTable) current(ino uint64) uint64 {
	if g.size.Load() == 0 {
		return 1
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen, ok := g.gens[ino]; ok {
		return gen
	}
	return 1
}

// fresh returns the generation of an entry that was just created with
// inode number ino: one more than the node the kernel may still hold for
// that number, else 1.
func (g *genTable) fresh(ino uint64) uint64 {
	if g.size.Load() == 0 {
		return 1
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old, ok := g.dead[ino]
	if !ok {
		// A number whose entry went without our knowledge: the node
		// of that entry may still be known too.
		old, ok = g.gens[ino]
	}
	if !ok {
		return 1
	}
	delete(g.dead, ino)
	if g.gens == nil {
		g.gens = make(map[uint64]uint64)
	}
	gen := old + 1
	if gen == 0 {
		gen = 1 // 0 is the root's
	}
	if gen == 1 {
		delete(g.gens, ino)
	} else {
		g.put(g.gens, ino, gen)
	}
	g.resize()
	return gen
}

// removed records that the entry of node ch (nil: the kernel never
// looked it up, nothing to record) was removed through the mount.
func (g *genTable) removed(ch *fs.Inode) {
	if ch == nil {
		return
	}
	id := ch.StableAttr()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead == nil {
		g.dead = make(map[uint64]uint64)
	}
	g.put(g.dead, id.Ino, id.Gen)
	g.resize()
}

// forgotten records that go-fuse dropped a node with id: the kernel
// holds no inode for it any more.
func (g *genTable) forgotten(id fs.StableAttr) {
	if g.size.Load() == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen, ok := g.dead[id.Ino]; ok && gen == id.Gen {
		delete(g.dead, id.Ino)
		if g.gens[id.Ino] == id.Gen {
			// The removed entry's generation is no longer needed.
			delete(g.gens, id.Ino)
		}
	}
	g.resize()
}

// put sets m[k] = v, making room first when m is full.
func (g *genTable) put(m map[uint64]uint64, k, v uint64) {
	if _, ok := m[k]; !ok && len(m) >= maxGenEntries {
		for old := range m {
			delete(m, old)
			break
		}
	}
	m[k] = v
}

func (g *genTable) resize() {
	g.size.Store(int32(len(g.dead) + len(g.gens)))
}

var _ = (fs.NodeOnForgetter)((*Node)(nil))

// OnForget is called by go-fuse when it drops the node.
func (n *Node) OnForget() {
	n.rn.gens.forgotten(n.StableAttr())
}
