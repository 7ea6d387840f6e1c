package fuseutil

import (
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// ReadResults hands out fuse.ReadResult values over a caller-supplied
// buffer without allocating on every read, which fuse.ReadResultData does
// (one object per READ request). go-fuse calls Done exactly once, after the
// reply was sent, and drops its reference; Done returns the value to the
// pool. The zero value is ready to use; it must not be copied after first
// use.
type ReadResults struct {
	pool sync.Pool
}

// readResult is a fuse.ReadResult over bytes that stay valid until Done.
type readResult struct {
	data []byte
	from *ReadResults
}

// Get returns a fuse.ReadResult for data, which must stay unchanged until
// go-fuse has sent it (the request buffer passed to Read qualifies).
func (p *ReadResults) Get(data []byte) fuse.ReadResult {
	r, _ := p.pool.Get().(*readResult)
	if r == nil {
		r = &readResult{from: p}
	}
	r.data = data
	return r
}

// Bytes returns the data itself; go-fuse writes it to the kernel as is.
func (r *readResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	return r.data, fuse.OK
}

// Size is the length of the data.
func (r *readResult) Size() int {
	return len(r.data)
}

// Done returns r to its pool; go-fuse calls it once the reply is sent.
func (r *readResult) Done() {
	r.data = nil
	r.from.pool.Put(r)
}
