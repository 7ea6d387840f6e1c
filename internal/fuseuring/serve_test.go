//go:build linux

package fuseuring

import (
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestServeAllocs: handing a request to the handler and framing its reply
// allocates nothing per request (the handler's own allocations aside);
// the slices given to the handler are the entry's (reqVecs).
func TestServeAllocs(t *testing.T) {
	const payload = 1 << 16
	var got [][]byte
	r := &Ring{payload: payload, handle: func(in, out [][]byte) (int, fuse.Status) {
		got = in
		return outHeaderSize, fuse.OK
	}}
	q := &queue{r: r}
	hdr := make([]byte, hdrSize)
	buf := make([]byte, payload)
	ih := (*fuse.InHeader)(unsafe.Pointer(&hdr[hdrInOut]))
	ih.Length, ih.Opcode, ih.Unique = inHeaderSize, 3, 7 // GETATTR
	vecs := new(reqVecs)
	if n := testing.AllocsPerRun(100, func() { q.serve(hdr, buf, vecs) }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
	if len(got) != 3 || len(got[0]) != inHeaderSize || &got[0][0] != &hdr[0] {
		t.Errorf("handler got %d slices, not the request header in place", len(got))
	}
	if r.Served() != 101 {
		t.Errorf("Served() = %d after 101 requests", r.Served())
	}
}
