package fuseserve

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/testutil"
)

// tree is a root directory with one file "f" containing "hello".
type tree struct{ fs.Inode }

func (r *tree) OnAdd(ctx context.Context) {
	// Inode number 2 gives node ID 2 both where node IDs are the inode
	// numbers (forward mounts) and where go-fuse numbers nodes itself.
	f := r.NewPersistentInode(ctx, &fs.MemRegularFile{Data: []byte("hello"), Attr: fuse.Attr{Mode: 0o644}}, fs.StableAttr{Ino: 2})
	r.AddChild("f", f, false)
}

func mount(t *testing.T, o Options) (string, *Server) {
	t.Helper()
	testutil.RequireFuse(t)
	mnt := t.TempDir()
	srv, err := Mount(mnt, &tree{}, mountopts.Build(mountopts.Params{CipherDir: "fuseserve-test", ReadOnly: true}), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testutil.Unmount(t, mnt, srv.Unmount)
		srv.Wait()
	})
	return mnt, srv
}

// TestTrace: with a trace logger every request is logged once it returns,
// with its result; failures show their errno.
func TestTrace(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	mnt, _ := mount(t, Options{Trace: logs.Logger(slog.LevelDebug)})
	if b, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(b) != "hello" {
		t.Fatalf("read: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "missing")); !os.IsNotExist(err) {
		t.Fatalf("stat missing: %v", err)
	}
	out := logs.String()
	for _, want := range []string{
		`"fuse LOOKUP" node=1 result=OK name=f`,
		`"fuse OPEN" node=2 result=OK`,
		`"fuse READ" node=2 result=OK`,
		`"fuse LOOKUP" node=1 result=ENOENT`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
}

// TestNoTrace: without a trace logger nothing is logged (and nothing
// formatted).
func TestNoTrace(t *testing.T) {
	mnt, srv := mount(t, Options{})
	if _, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil {
		t.Fatal(err)
	}
	if srv.raw.trace != nil {
		t.Fatal("trace set")
	}
}

// blockingFS is a RawFileSystem whose Read blocks until release is closed.
type blockingFS struct {
	fuse.RawFileSystem
	entered  chan struct{}
	release  chan struct{}
	finished atomic.Bool
}

func (b *blockingFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	close(b.entered)
	<-b.release
	b.finished.Store(true)
	return fuse.ReadResultData(nil), fuse.OK
}

// TestDrainWaitsForInflight: drain (the second half of Server.Wait) returns
// only after the request that was running has returned; that is what lets
// the caller wipe the keys afterwards.
func TestDrainWaitsForInflight(t *testing.T) {
	inner := &blockingFS{entered: make(chan struct{}), release: make(chan struct{})}
	w := &rawFS{RawFileSystem: inner}
	go w.Read(nil, &fuse.ReadIn{}, nil)
	<-inner.entered
	drained := make(chan bool)
	go func() {
		w.drain()
		drained <- inner.finished.Load()
	}()
	// Give a broken drain the chance to return early; a correct one
	// cannot, however long this is.
	time.Sleep(50 * time.Millisecond)
	close(inner.release)
	if !<-drained {
		t.Fatal("drain returned while a request was still running")
	}
}

// TestActivityCounters: requests are counted, and open handles while they
// are open (RELEASE comes asynchronously after close, hence the wait).
func TestActivityCounters(t *testing.T) {
	mnt, srv := mount(t, Options{})
	before := srv.OpCount()
	f, err := os.Open(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if srv.OpCount() <= before {
		t.Error("OpCount did not grow")
	}
	if n := srv.OpenFileCount(); n != 1 {
		t.Errorf("OpenFileCount %d with one open file", n)
	}
	f.Close()
	if !testutil.WaitFor(10*time.Second, func() bool { return srv.OpenFileCount() == 0 }) {
		t.Errorf("OpenFileCount %d after close", srv.OpenFileCount())
	}
}

// TestReadAheadRaised: as root, Mount raises the mount's readahead window
// to ReadAheadKB (the kernel negotiates at most 128 KiB at INIT). Root is
// what CI runs as, so there the test always runs.
func TestReadAheadRaised(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can raise the readahead window")
	}
	mnt, _ := mount(t, Options{ReadAheadKB: mountopts.ReadAheadKB})
	path, err := bdiReadAheadPath(mnt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// At least: a window that is larger already is left alone.
	if got, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || got < mountopts.ReadAheadKB {
		t.Errorf("%s = %q, want at least %d", path, b, mountopts.ReadAheadKB)
	}
}

// TestReadAheadOnlyFuse: a directory that is not the root of a FUSE mount
// (a mount through /dev/fd/N, a path mounted over) never names a bdi,
// so no other device's window is touched.
func TestReadAheadOnlyFuse(t *testing.T) {
	dir := t.TempDir()
	if _, err := bdiReadAheadPath(dir); err == nil {
		t.Errorf("bdiReadAheadPath(%s) succeeded on a non-FUSE directory", dir)
	}
	if _, err := bdiReadAheadPath("/dev/null"); err == nil {
		t.Error("bdiReadAheadPath(/dev/null) succeeded")
	}
	if err := raiseReadAhead(dir, mountopts.ReadAheadKB); err == nil {
		t.Errorf("raiseReadAhead(%s) succeeded on a non-FUSE directory", dir)
	}
}

// TestUnmountBusyErrorOneLine: unmounting a busy mount fails with
// fusermount's reason in a one-line message (go-fuse's own spans three
// lines, which split gocryptfs's "Unmount failed: …. Trying lazy unmount."
// notice).
func TestUnmountBusyErrorOneLine(t *testing.T) {
	mnt, srv := mount(t, Options{})
	f, err := os.Open(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Unmount()
	f.Close()
	if err == nil {
		t.Fatal("unmount of a busy mount succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "busy") {
		t.Errorf("error %q: want one line naming the reason", msg)
	}
}
