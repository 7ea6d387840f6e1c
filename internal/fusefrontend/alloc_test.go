package fusefrontend

import (
	"context"
	"log/slog"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// allocTestRoot skips under -race and returns an unmounted RootNode on a
// fresh CIPHERDIR (closed at the end of the test).
func allocTestRoot(t *testing.T) *RootNode {
	t.Helper()
	return allocTestRootArgs(t, Args{})
}

// allocTestRootArgs is allocTestRoot with args (CipherDir and Logger are
// filled in).
func allocTestRootArgs(t *testing.T, args Args) *RootNode {
	t.Helper()
	if testing.Short() || testutil.RaceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	core := coretest.New(t, coretest.Options{MasterKey: make([]byte, cryptocore.KeyLen), HKDF: true, Names: nametransform.Options{Raw64: true}})
	args.CipherDir, args.Logger = t.TempDir(), slog.New(slog.DiscardHandler)
	rn, err := NewRootNode(args, core.NT, core.CE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	return rn
}

// TestAllocsReadWrite counts the allocations of the Read and Write request
// handlers in steady state (no mount needed: the handlers only use the
// file handle). A 128 KiB request (the kernel's usual size) must not
// allocate per block; with one CPU it allocates nothing at all. Also with
// -sharedstorage, whose byte-range locks wait with the request's context
// (a cancellable one, as go-fuse hands out) when someone else holds them.
func TestAllocsReadWrite(t *testing.T) {
	t.Run("default", func(t *testing.T) { testAllocsReadWrite(t, Args{}, context.Background()) })
	t.Run("sharedstorage", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		testAllocsReadWrite(t, Args{SharedStorage: true}, ctx)
	})
}

func testAllocsReadWrite(t *testing.T, args Args, ctx context.Context) {
	rn := allocTestRootArgs(t, args)
	fd, err := unix.Openat(rn.rootFd, "f", unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f, err := rn.newFile(fd, unix.O_RDWR, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rn.releaseFile(f)
	data := make([]byte, 128<<10)
	if _, errno := rn.Node.Write(ctx, f, data, 0); errno != 0 {
		t.Fatal(errno)
	}
	dest := make([]byte, 128<<10)
	ops := []struct {
		name string
		fn   func()
	}{
		{"Write", func() {
			if _, errno := rn.Node.Write(ctx, f, data, 0); errno != 0 {
				t.Fatal(errno)
			}
		}},
		{"Write unaligned", func() {
			if _, errno := rn.Node.Write(ctx, f, data, 100); errno != 0 {
				t.Fatal(errno)
			}
		}},
		{"Write extending", func() {
			size, err := f.cf.Size(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, errno := rn.Node.Write(ctx, f, data, int64(size)); errno != 0 {
				t.Fatal(errno)
			}
		}},
		{"Read", func() {
			res, errno := rn.Node.Read(ctx, f, dest, 0)
			if errno != 0 {
				t.Fatal(errno)
			}
			res.Done()
		}},
		{"Read unaligned", func() {
			res, errno := rn.Node.Read(ctx, f, dest, 100)
			if errno != 0 {
				t.Fatal(errno)
			}
			res.Done()
		}},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, op := range ops {
		op.fn() // warm the pools
		if n := testing.AllocsPerRun(200, op.fn); n > 0 {
			t.Errorf("%s: %.2f allocations per request, want 0", op.name, n)
		}
	}
}
