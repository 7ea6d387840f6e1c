// Package inomap assigns the inode numbers that a gocryptfs mount shows
// (docs/format.md section 10). The backing filesystem's numbers are only unique
// per device, and reverse mode adds virtual files that have no backing
// inode of their own, so the numbers are remapped:
//
//   - entries on the device of the backing root keep their inode number,
//   - every other (device, tag) pair gets a 15-bit namespace number n and its
//     entries are shown as n<<48 | ino,
//   - when that is impossible (inode number ≥ 2^48, namespaces exhausted) or
//     a caller asks for a fresh number, a counter starting at 2^63 is used.
//
// A Map is safe for concurrent use. Numbers are stable for the lifetime of
// the Map, i.e. of one mount.
package inomap

import (
	"sync"
)

// Tag tells apart several shown inodes that derive from the same backing
// inode, e.g. a directory and its virtual gocryptfs.diriv file. TagNone is
// the backing entry itself; callers define further tags.
type Tag uint8

// TagNone marks the backing entry itself.
const TagNone Tag = 0

const (
	// nsBits is the width of the namespace field.
	nsBits = 15
	// inoBits is the width of the backing inode number inside a namespace.
	inoBits = 48
	// maxPassthrough is the largest inode number that fits below the
	// namespace field.
	maxPassthrough = 1<<inoBits - 1
	// maxNamespace is the largest namespace number; keeping bit 63 clear
	// leaves the upper half of the number space to the spill counter.
	maxNamespace = 1<<nsBits - 1
	// FirstSpill is the first number the counter hands out (2^63).
	FirstSpill = 1 << 63
)

// QIno identifies a shown inode before translation: the backing device and
// inode number plus a tag.
type QIno struct {
	Dev uint64
	Tag Tag
	Ino uint64
}

type nsKey struct {
	dev uint64
	tag Tag
}

// Map translates QIno values into shown inode numbers.
type Map struct {
	rootDev uint64

	mu         sync.Mutex
	namespaces map[nsKey]uint64
	nextNS     uint64
	spilled    map[QIno]uint64
	nextSpill  uint64
}

// New returns a Map that passes through the inode numbers of device
// rootDev (the device of the backing root directory).
func New(rootDev uint64) *Map {
	return &Map{
		rootDev:    rootDev,
		namespaces: make(map[nsKey]uint64),
		nextNS:     1,
		spilled:    make(map[QIno]uint64),
		nextSpill:  FirstSpill,
	}
}

// Translate returns the shown inode number for q. The same q always gives
// the same number, and different q give different numbers.
func (m *Map) Translate(q QIno) uint64 {
	if q.Dev == m.rootDev && q.Tag == TagNone && q.Ino <= maxPassthrough {
		return q.Ino
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if q.Ino <= maxPassthrough {
		k := nsKey{q.Dev, q.Tag}
		ns, ok := m.namespaces[k]
		if !ok && m.nextNS <= maxNamespace {
			ns = m.nextNS
			m.nextNS++
			m.namespaces[k] = ns
			ok = true
		}
		if ok {
			return ns<<inoBits | q.Ino
		}
	}
	if n, ok := m.spilled[q]; ok {
		return n
	}
	n := m.nextSpillLocked()
	m.spilled[q] = n
	return n
}

// NextSpill returns a fresh number from the counter (2^63 upwards) that
// Translate never returns for another inode.
func (m *Map) NextSpill() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nextSpillLocked()
}

func (m *Map) nextSpillLocked() uint64 {
	n := m.nextSpill
	m.nextSpill++
	return n
}
