package fusefrontend_reverse

import (
	"context"
	"runtime"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestReadHandlerAllocations: the whole Read request handler, reply value
// included, allocates nothing in steady state (one CPU, so that no worker
// goroutines of contentenc are involved).
func TestReadHandlerAllocations(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful with -race")
	}
	f, _ := openForRead(t, 1<<20)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	dest := make([]byte, 128<<10)
	read := func() {
		res, errno := f.Read(ctx, dest, 100)
		if errno != 0 {
			t.Fatal(errno)
		}
		res.Done()
	}
	read()
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("%.2f allocations per Read request, want 0", n)
	}
}
