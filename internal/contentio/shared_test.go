//go:build linux

package contentio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// TestSharedStorageTwoTables stands for two mounts of one CIPHERDIR: two
// Tables (no shared in-process lock), each with its own opens of one
// backing file, write interleaved unaligned ranges that share blocks, into
// an empty file and then over it, while readers read. With SharedStorage
// the byte-range locks must keep every update and every read untorn.
func TestSharedStorageTwoTables(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	const size, maxPiece = 40 << 10, 200
	opts := Options{SharedStorage: true}
	path := linkedPair(t)[0]
	var files [2]*File
	for i := range files {
		files[i] = openPath(t, NewTable(), ce, path, opts)
	}
	for round := 1; round <= 2; round++ {
		r := rand.New(rand.NewPCG(uint64(round), 2))
		want := make([]byte, size)
		type piece struct{ off, n int }
		var mine [2][]piece
		for off, w := 0, 0; off < size; w ^= 1 {
			n := min(1+r.IntN(maxPiece), size-off)
			for i := range n {
				want[off+i] = byte(round*31 + off + i)
			}
			mine[w] = append(mine[w], piece{off, n})
			off += n
		}
		runAll(t, 3, func(g int) error {
			if g == 2 {
				// A reader: every block it reads must authenticate.
				buf := make([]byte, 3000)
				for i := range 200 {
					if _, err := files[i%2].ReadAt(buf, int64(i*997%size)); err != nil && !errors.Is(err, io.EOF) {
						return fmt.Errorf("read: %w", err)
					}
				}
				return nil
			}
			ps := mine[g]
			rand.New(rand.NewPCG(uint64(g), 9)).Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			for _, p := range ps {
				if _, err := files[g].WriteAt(want[p.off:p.off+p.n], int64(p.off)); err != nil {
					return fmt.Errorf("writer %d: %w", g, err)
				}
			}
			return nil
		})
		fresh := openPath(t, NewTable(), ce, path, Options{})
		got := readAll(t, fresh)
		fresh.Close()
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d: %d bytes read, want %d; content differs", round, len(got), len(want))
		}
	}
}

// TestSharedStorageLockRegion: the internal locks lie at or beyond
// LockBase, and application lock ranges are clamped below it.
func TestSharedStorageLockRegion(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	f, path := newFile(t, ce, Options{SharedStorage: true})
	if _, err := f.WriteAt(make([]byte, 10000), 0); err != nil {
		t.Fatal(err)
	}
	// While a write holds its locks, another open file description sees
	// them at LockBase + ciphertext offset, nowhere below.
	other, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other)
	h, err := f.writeLock(context.Background(), 100, 10)
	if err != nil {
		t.Fatal(err)
	}
	probe := func(start, n int64) int16 {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: start, Len: n}
		if err := unix.FcntlFlock(uintptr(other), unix.F_OFD_GETLK, &lk); err != nil {
			t.Fatal(err)
		}
		return lk.Type
	}
	if probe(0, LockBase) != unix.F_UNLCK {
		t.Error("internal lock below LockBase")
	}
	if probe(LockBase, 0) == unix.F_UNLCK {
		t.Error("no internal lock at LockBase")
	}
	f.release(h)
	if probe(0, 0) != unix.F_UNLCK {
		t.Error("lock left after unlock")
	}
	for _, c := range []struct{ start, n, want int64 }{{0, 0, LockBase}, {10, 0, LockBase - 10}, {5, 7, 7}, {LockBase - 1, 100, 1}} {
		if got, err := ClampAppLock(c.start, c.n); err != nil || got != c.want {
			t.Errorf("ClampAppLock(%d, %d) = %d, %v; want %d", c.start, c.n, got, err, c.want)
		}
		if c.n == 0 && UnclampAppLock(c.start, c.want) != 0 {
			t.Errorf("UnclampAppLock(%d, %d) != 0", c.start, c.want)
		}
	}
	if _, err := ClampAppLock(LockBase, 1); err == nil {
		t.Error("a lock at LockBase accepted")
	}
}

// holdForeignLock takes a write lock at LockBase and beyond on path (the
// range of the internal locks) through an open file description of its
// own, as another mount or any process that can write CIPHERDIR can, and
// returns the function that releases it (also run at the end of the test).
func holdForeignLock(t *testing.T, path string) (release func()) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: unix.SEEK_SET, Start: LockBase}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { unix.Close(fd) }) }
	t.Cleanup(release)
	return release
}

// sharedOps are the operations that take the internal locks, each on f
// with ctx.
var sharedOps = []struct {
	name string
	fn   func(ctx context.Context, f *File) error
}{
	{"ReadAtContext", func(ctx context.Context, f *File) error {
		_, err := f.ReadAtContext(ctx, make([]byte, 100), 5000)
		return err
	}},
	{"WriteAtContext inside", func(ctx context.Context, f *File) error {
		_, err := f.WriteAtContext(ctx, []byte("x"), 10)
		return err
	}},
	{"WriteAtContext at end", func(ctx context.Context, f *File) error {
		_, err := f.WriteAtContext(ctx, []byte("x"), 20000)
		return err
	}},
	{"Append", func(ctx context.Context, f *File) error { _, _, err := f.Append(ctx, []byte("x")); return err }},
	{"Truncate", func(ctx context.Context, f *File) error { return f.Truncate(ctx, 3) }},
	{"Allocate", func(ctx context.Context, f *File) error { return f.Allocate(ctx, 0, 1, 0) }},
	{"SeekData", func(ctx context.Context, f *File) error { _, err := f.SeekData(ctx, 0); return err }},
	{"SeekHole", func(ctx context.Context, f *File) error { _, err := f.SeekHole(ctx, 0); return err }},
	{"Size", func(ctx context.Context, f *File) error { _, err := f.Size(ctx); return err }},
	{"Verify", func(ctx context.Context, f *File) error { return f.Verify(ctx) }},
}

// awaitOp waits for the outcome of an operation that waits for a lock
// held through release. If it has not returned after testutil.RunTimeout
// (a hang detector, not a speed goal), the lock is released so that it
// can finish, and hung is set.
func awaitOp(done <-chan error, release func()) (err error, hung bool) {
	select {
	case err = <-done:
		return err, false
	case <-time.After(testutil.RunTimeout):
		release()
		return <-done, true
	}
}

// TestSharedStorageLockWaitCancel: with SharedStorage, an operation that
// waits for internal locks held by someone else (another open file
// description of the backing file, at LockBase: what another mount, a sync
// tool or a hostile writer of CIPHERDIR can hold forever) returns EINTR
// when its context is cancelled, with nothing changed, and leaves no lock
// behind: once the holder lets go, the file works. A second operation
// queued behind the first in the same Table returns with it.
func TestSharedStorageLockWaitCancel(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	for _, op := range sharedOps {
		t.Run(op.name, func(t *testing.T) {
			f, path := newFile(t, ce, Options{SharedStorage: true, lockTimeout: time.Hour})
			want := bytes.Repeat([]byte("0123456789"), 1000)
			if _, err := f.WriteAt(want, 0); err != nil {
				t.Fatal(err)
			}
			before := readBacking(t, path)
			release := holdForeignLock(t, path)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 2)
			for range 2 {
				go func() { done <- op.fn(ctx, f) }()
			}
			cancel()
			for range 2 {
				err, hung := awaitOp(done, release)
				// Verify checks ctx itself between chunks.
				if hung || !errors.Is(err, syscall.EINTR) && !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled while waiting for a lock: %v (hung until the holder let go: %v), want EINTR at once", err, hung)
				}
			}
			if !bytes.Equal(readBacking(t, path), before) {
				t.Error("a cancelled operation changed the file")
			}
			release()
			if err := op.fn(context.Background(), f); err != nil && !errors.Is(err, io.EOF) {
				t.Errorf("after the holder let go: %v", err)
			}
		})
	}
}

// TestSharedStorageQueuedCancel: a request queued in the same Table behind
// one that waits for a lock held by someone else returns EINTR when it is
// cancelled, while the first one still waits; the first one completes
// when the holder lets go.
func TestSharedStorageQueuedCancel(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	for _, op := range sharedOps {
		t.Run(op.name, func(t *testing.T) {
			// No timeout before the hang detector's: only the
			// cancellation may end the queued request's wait.
			f, path := newFile(t, ce, Options{SharedStorage: true, lockTimeout: time.Hour})
			if _, err := f.WriteAt(make([]byte, 10000), 0); err != nil {
				t.Fatal(err)
			}
			release := holdForeignLock(t, path)
			first := make(chan error, 1)
			go func() { first <- op.fn(context.Background(), f) }()
			// The first request holds the inode (and waits for the
			// byte-range lock).
			if !testutil.WaitFor(testutil.RunTimeout, func() bool { return len(f.e.serial) == 1 }) {
				t.Fatal("the first request never took the inode")
			}
			ctx, cancel := context.WithCancel(context.Background())
			second := make(chan error, 1)
			go func() { second <- op.fn(ctx, f) }()
			cancel()
			if err, hung := awaitOp(second, release); hung || !errors.Is(err, syscall.EINTR) && !errors.Is(err, context.Canceled) {
				t.Errorf("queued request cancelled: %v (hung until the holder let go: %v), want EINTR at once", err, hung)
			}
			release()
			if err, hung := awaitOp(first, release); hung || err != nil && !errors.Is(err, io.EOF) {
				t.Errorf("first request after the holder let go: %v (hung: %v)", err, hung)
			}
		})
	}
}

// TestSharedStorageLockTimeout: a lock that someone else keeps past
// Options.lockTimeout fails the operation with EIO (nothing is changed)
// and is logged once per inode; a request without a deadline of its own
// (context.Background) still ends.
func TestSharedStorageLockTimeout(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	var logBuf syncBuffer
	opts := Options{SharedStorage: true, lockTimeout: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
	f, path := newFile(t, ce, opts)
	if _, err := f.WriteAt(make([]byte, 10000), 0); err != nil {
		t.Fatal(err)
	}
	before := readBacking(t, path)
	release := holdForeignLock(t, path)
	for _, op := range sharedOps {
		done := make(chan error, 1)
		go func() { done <- op.fn(context.Background(), f) }()
		if err, hung := awaitOp(done, release); hung || !errors.Is(err, syscall.EIO) {
			t.Errorf("%s with the lock held past the timeout: %v (hung: %v), want EIO", op.name, err, hung)
		}
	}
	if !bytes.Equal(readBacking(t, path), before) {
		t.Error("an operation that timed out changed the file")
	}
	if n := strings.Count(logBuf.String(), "past the lock timeout"); n != 1 {
		t.Errorf("%d log lines about the timeout, want 1:\n%s", n, logBuf.String())
	}
	release()
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Errorf("after the holder let go: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for log output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAllocsSharedStorageContext: the lock path of SharedStorage with a
// request context (a cancellable one, as go-fuse hands out) allocates
// nothing when the locks are free.
func TestAllocsSharedStorageContext(t *testing.T) {
	if testing.Short() || testutil.RaceEnabled {
		t.Skip("measures allocations (not meaningful under -race)")
	}
	ce := newCE(t, cryptocore.AESGCM)
	f, _ := newFile(t, ce, Options{SharedStorage: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	buf := make([]byte, 3*bs)
	if _, err := f.WriteAtContext(ctx, make([]byte, 8*bs), 0); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct {
		name string
		fn   func()
	}{
		{"ReadAtContext", func() { f.ReadAtContext(ctx, buf, 2*bs+100) }},
		{"WriteAtContext inside", func() { f.WriteAtContext(ctx, buf, bs+100) }},
		{"WriteAtContext at end", func() { f.WriteAtContext(ctx, buf[:100], 8*bs-50) }},
	} {
		op.fn()
		if n := testutil.MallocsPerRun(20, op.fn); n > 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", op.name, n)
		}
	}
}

// BenchmarkSharedStorageSmallIO: 4 KiB reads and writes inside a file with
// SharedStorage, where every request takes and drops byte-range locks on
// the backing file (two lock and two unlock calls) while nobody else
// holds them.
func BenchmarkSharedStorageSmallIO(b *testing.B) {
	ce := newCE(b, cryptocore.AESGCM)
	f, _ := newFile(b, ce, Options{SharedStorage: true})
	if _, err := f.WriteAt(make([]byte, 64*bs), 0); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, bs)
	b.Run("ReadAt", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := f.ReadAt(buf, int64(i%32)*bs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteAt", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := f.WriteAt(buf, int64(i%32)*bs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
