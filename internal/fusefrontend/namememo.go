package fusefrontend

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"gocryptfs/internal/nametransform"
)

// nameMemo remembers recently computed backing names: plaintext name and
// directory IV -> encrypted (and, for long names, hashed) name. A backing
// name is a pure function of the master key, the IV and the plaintext
// name, so an entry can never become wrong and nothing is ever
// invalidated. It saves the EME encryption of a name that is resolved
// again: LOOKUP then OPEN of a file, the GETXATTRs that "ls -l" sends for
// every entry right after the READDIRPLUS that listed it (whose decrypted
// names are put here), LOOKUP then CREATE of a new file.
//
// It is a direct-mapped table of fixed size: a new name replaces whatever
// sat in its slot, so the memory is bounded by its number of slots (each
// holds two names of at most 255 bytes; typically about 120 bytes).
// Slots are guarded by striped locks, so that concurrent requests rarely
// wait for each other.
type nameMemo struct {
	seed  maphash.Seed
	locks [memoLocks]sync.Mutex
	slots []memoSlot
}

type memoSlot struct {
	iv      [nametransform.DirIVLen]byte
	name    string // plaintext name; "" for an empty slot
	cName   string // backing name
	longEnc string // full encrypted name when cName is hashed
}

const (
	// memoSlots covers the largest directories of a source tree (Go's
	// has 883 entries in one) several times over, so that a listing's
	// names are still there when the GETXATTRs for them come.
	memoSlots = 4096
	// xattrMemoSlots is for encrypted xattr names: "ls -l" asks for
	// two or three names of every file.
	xattrMemoSlots = 64
	memoLocks      = 64
)

// newNameMemo returns a memo of n slots.
func newNameMemo(n int) *nameMemo {
	return &nameMemo{seed: maphash.MakeSeed(), slots: make([]memoSlot, n)}
}

// ivKey is the IV as stored in a slot: nil or short (deterministic
// names, which ignore the IV) becomes the zero IV.
func ivKey(iv []byte) (k [nametransform.DirIVLen]byte) {
	copy(k[:], iv)
	return k
}

// slot returns the index of the slot for (k, name).
func (m *nameMemo) slot(k *[nametransform.DirIVLen]byte, name string) int {
	h := maphash.String(m.seed, name)
	h ^= binary.LittleEndian.Uint64(k[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(k[8:])
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h % uint64(len(m.slots)))
}

// get returns the remembered backing name of name in a directory with IV
// iv.
func (m *nameMemo) get(iv []byte, name string) (cName, longEnc string, ok bool) {
	if name == "" {
		return "", "", false
	}
	k := ivKey(iv)
	i := m.slot(&k, name)
	mu := &m.locks[i%memoLocks]
	mu.Lock()
	s := &m.slots[i]
	if s.name == name && s.iv == k {
		cName, longEnc, ok = s.cName, s.longEnc, true
	}
	mu.Unlock()
	return cName, longEnc, ok
}

// put remembers the backing name of name under IV iv.
func (m *nameMemo) put(iv []byte, name, cName, longEnc string) {
	if name == "" {
		return
	}
	k := ivKey(iv)
	i := m.slot(&k, name)
	mu := &m.locks[i%memoLocks]
	mu.Lock()
	m.slots[i] = memoSlot{iv: k, name: name, cName: cName, longEnc: longEnc}
	mu.Unlock()
}
