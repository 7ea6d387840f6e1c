package cryptocore

import (
	"crypto/rand"
	"sync"
)

// nonceBatch is how many random bytes one getrandom call fetches: enough for
// 256 GCM nonces, so writing a 1 MiB request costs one system call.
const nonceBatch = 4096

// NonceSource hands out random bytes for nonces from crypto/rand, fetched in
// batches so that sealing a block does not cost a system call. Bytes are
// never handed out twice. It is safe for concurrent use.
type NonceSource struct {
	mu  sync.Mutex
	buf [nonceBatch]byte
	pos int
}

// NewNonceSource returns an empty source; the first Fill refills it.
func NewNonceSource() *NonceSource {
	return &NonceSource{pos: nonceBatch}
}

// Fill overwrites dst with fresh random bytes. An all-zero result (which the
// format reserves for holes) is rejected and drawn again. dst must be at
// most nonceBatch bytes long.
func (n *NonceSource) Fill(dst []byte) {
	if len(dst) > nonceBatch {
		panic("cryptocore: nonce request too large")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		if nonceBatch-n.pos < len(dst) {
			n.refill()
		}
		copy(dst, n.buf[n.pos:n.pos+len(dst)])
		clear(n.buf[n.pos : n.pos+len(dst)])
		n.pos += len(dst)
		if !allZero(dst) {
			return
		}
	}
}

func (n *NonceSource) refill() {
	// crypto/rand.Read never returns an error on Linux (it would crash the
	// program instead), as documented since Go 1.24.
	rand.Read(n.buf[:])
	n.pos = 0
}

// RandBytes returns n fresh random bytes, for salts, file IDs and keys.
func RandBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func allZero(b []byte) bool {
	var acc byte
	for _, x := range b {
		acc |= x
	}
	return acc == 0
}
