//go:build linux

package fuseserve

// Tests of the io_uring transport. Most tests of the frontends and of the
// binaries run on whichever transport the kernel parameter selects
// (test.bash runs them once with it on and once off); the tests here set
// the parameter themselves (testutil.SetURing) and check what only the
// transport decides: that the rings really carry the requests, the
// fallback, and how a request served from a ring entry is interrupted,
// fails, is waited for at unmount and how the queues grow.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/testutil"
)

// Opcodes the tests look for in Stats.DevByOpcode.
const (
	opLookup = 1
	opRead   = 15
	opWrite  = 16
)

// childEnv names the variable that turns the test binary into a child
// process that reads the file it names (see TestMain): a reader that the
// test can kill.
const childEnv = "GOCRYPTFS_FUSESERVE_TEST_READ"

func TestMain(m *testing.M) {
	if p := os.Getenv(childEnv); p != "" {
		os.Exit(childRead(p))
	}
	os.Exit(m.Run())
}

// childRead reads p once and exits 0 on success, 1 otherwise.
func childRead(p string) int {
	f, err := os.Open(p)
	if err != nil {
		return 1
	}
	if _, err := f.Read(make([]byte, 16)); err != nil {
		return 1
	}
	return 0
}

// transports are the two ways a mount may be served, for tests that run
// once per transport: io_uring with the kernel parameter on, /dev/fuse
// with it off (TransportAuto, what ships by default, in both).
var transports = []struct {
	name string
	on   bool
	want Transport
}{
	{"classic", false, TransportClassic},
	{"io_uring", true, TransportURing},
}

// eachTransport runs fn in a subtest per transport, with the kernel
// parameter set accordingly.
func eachTransport(t *testing.T, fn func(t *testing.T, want Transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			testutil.SetURing(t, tr.on)
			fn(t, tr.want)
		})
	}
}

// mountRoot mounts root on a temp dir with the binary's options for p and
// checks that it got transport want; it unmounts in t.Cleanup.
func mountRoot(t *testing.T, root fs.InodeEmbedder, p mountopts.Params, o Options, want Transport) (string, *Server) {
	t.Helper()
	testutil.RequireFuse(t)
	mnt := t.TempDir()
	srv, err := Mount(mnt, root, mountopts.Build(p), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if testutil.IsMounted(mnt) {
			testutil.Unmount(t, mnt, srv.Unmount)
		}
		srv.Wait()
	})
	if w, ok := root.(*waitTree); ok {
		// Runs before the cleanup above (cleanups run last in, first
		// out): a test that failed while a read of "block" waited
		// would otherwise wait in srv.Wait for good, and a test
		// process that exits (its timeout) while one of its threads
		// waits for an answer from its own mount never ends: the
		// thread waits in the kernel for a daemon that is gone, and
		// keeps the /dev/fuse descriptor, whose close would abort
		// the connection, open.
		t.Cleanup(w.letGo)
	}
	if tr, why := srv.Transport(); tr != want {
		t.Fatalf("transport %v (%s), want %v", tr, why, want)
	}
	return mnt, srv
}

// countOps counts the trace lines per operation ("LOOKUP", "READ", ...).
func countOps(logs *testutil.SyncBuffer, op string) int {
	return logs.CountLines(`"fuse ` + op + `"`)
}

// daemonNode is a loopback node whose files are served by the daemon:
// go-fuse's loopback files ask the kernel for passthrough, where reads and
// writes would not reach the daemon at all.
type daemonNode struct{ *fs.LoopbackNode }

// daemonFile is what a daemonNode's open file offers: no PassthroughFd.
type daemonFile interface {
	fs.FileReader
	fs.FileWriter
	fs.FileFsyncer
	fs.FileFlusher
	fs.FileReleaser
	fs.FileGetattrer
	fs.FileSetattrer
}

type daemonHandle struct{ daemonFile }

func hidePassthrough(fh fs.FileHandle) fs.FileHandle {
	if f, ok := fh.(daemonFile); ok {
		return daemonHandle{f}
	}
	return fh
}

func (n *daemonNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &daemonNode{ops.(*fs.LoopbackNode)}
}

func (n *daemonNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	return hidePassthrough(fh), fl, errno
}

func (n *daemonNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	return in, hidePassthrough(fh), fl, errno
}

// newDaemonLoopback is a loopback tree of dir of daemonNodes.
func newDaemonLoopback(t *testing.T, dir string) fs.InodeEmbedder {
	root, err := fs.NewLoopbackRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &daemonNode{root.(*fs.LoopbackNode)}
}

// TestURingUsed: with the kernel parameter on, a mount (-uring=auto and
// -uring=true) is served over io_uring, and no LOOKUP, READ or WRITE
// request comes through /dev/fuse: the rings carry them. Lookups, writes,
// fsync, reads and readdir are made on a loopback tree with the caches of
// -sharedstorage off, so that each reaches the daemon (the trace shows it).
func TestURingUsed(t *testing.T) {
	testutil.SetURing(t, true)
	for _, tr := range []Transport{TransportAuto, TransportURing} {
		t.Run(tr.String(), func(t *testing.T) {
			dir := t.TempDir()
			root := newDaemonLoopback(t, dir)
			logs := &testutil.SyncBuffer{}
			mnt, srv := mountRoot(t, root, mountopts.Params{CipherDir: dir, SharedStorage: true},
				Options{Transport: tr, Trace: logs.Logger(slog.LevelDebug)}, TransportURing)
			data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
			for i := range 4 {
				p := filepath.Join(mnt, fmt.Sprintf("f%d", i))
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					t.Fatal(err)
				}
				f.Close()
				// O_DIRECT: every read reaches the daemon.
				g, err := os.OpenFile(p, os.O_RDONLY|syscall.O_DIRECT, 0)
				if err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, len(data)+4096)
				n, err := g.Read(buf)
				g.Close()
				if err != nil || !bytes.Equal(buf[:n], data) {
					t.Fatalf("read back %d bytes (%v), want the %d written", n, err, len(data))
				}
				if _, err := os.Stat(p); err != nil {
					t.Fatal(err)
				}
			}
			if ents, err := os.ReadDir(mnt); err != nil || len(ents) != 4 {
				t.Fatalf("readdir: %d entries, %v", len(ents), err)
			}
			for _, op := range []string{"LOOKUP", "WRITE", "READ", "FSYNC", "READDIRPLUS"} {
				if countOps(logs, op) == 0 {
					t.Errorf("no %s request was served", op)
				}
			}
			st := srv.Stats()
			t.Logf("stats: %+v", st)
			if st.Transport != TransportURing || !strings.Contains(st.Reason, "is Y") {
				t.Errorf("Stats: transport %v (%s), want io_uring because %s is Y", st.Transport, st.Reason, testutil.URingParam)
			}
			if st.RingRequests == 0 {
				t.Error("no request was served from a ring entry")
			}
			for _, op := range []uint32{opLookup, opRead, opWrite} {
				if n := st.DevByOpcode[op]; n != 0 {
					t.Errorf("%d requests of opcode %d came through /dev/fuse", n, op)
				}
			}
			if st.RingQueues == 0 || st.RingEntries < st.RingQueues || st.PayloadSize < fuse.MAX_KERNEL_WRITE {
				t.Errorf("Stats: %d queues, %d entries, payload %d bytes", st.RingQueues, st.RingEntries, st.PayloadSize)
			}
		})
	}
}

// TestURingFallback: with the kernel parameter off, -uring=auto mounts on
// the classic transport and says why (the line -d shows), and
// -uring=true fails with that reason; with it on, -uring=false mounts on
// the classic transport.
func TestURingFallback(t *testing.T) {
	const why = "io_uring off: " + testutil.URingParam + " is N"
	t.Run("off/auto", func(t *testing.T) {
		testutil.SetURing(t, false)
		logs := &testutil.SyncBuffer{}
		mnt, srv := mountRoot(t, &tree{}, mountopts.Params{CipherDir: "fuseserve-test", ReadOnly: true},
			Options{Log: logs.Logger(slog.LevelDebug)}, TransportClassic)
		if _, reason := srv.Transport(); reason != why {
			t.Errorf("reason %q, want %q", reason, why)
		}
		if st := srv.Stats(); st.Transport != TransportClassic || st.Reason != why || st.RingRequests != 0 {
			t.Errorf("Stats %+v, want the classic transport because %q", st, why)
		}
		if !strings.Contains(logs.String(), why) {
			t.Errorf("the debug log does not say %q:\n%s", why, logs.String())
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(b) != "hello" {
			t.Fatalf("read: %q %v", b, err)
		}
	})
	t.Run("off/true", func(t *testing.T) {
		testutil.SetURing(t, false)
		testutil.RequireFuse(t)
		mnt := t.TempDir()
		srv, err := Mount(mnt, &tree{}, mountopts.Build(mountopts.Params{CipherDir: "fuseserve-test", ReadOnly: true}), Options{Transport: TransportURing})
		if err == nil {
			testutil.Unmount(t, mnt, srv.Unmount)
			srv.Wait()
			t.Fatal("-uring=true mounted with the kernel parameter off")
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("error %q does not say %q", err, why)
		}
		if testutil.IsMounted(mnt) {
			t.Errorf("%s is mounted after the failed mount", mnt)
		}
	})
	t.Run("on/false", func(t *testing.T) {
		testutil.SetURing(t, true)
		_, srv := mountRoot(t, &tree{}, mountopts.Params{CipherDir: "fuseserve-test", ReadOnly: true},
			Options{Transport: TransportClassic}, TransportClassic)
		if _, reason := srv.Transport(); reason != "io_uring off: -uring=false" {
			t.Errorf("reason %q", reason)
		}
	})
}

// waitTree is a root directory with three files: "f" holds "hello";
// reads of "block" wait until their request is interrupted (and fail
// with EINTR) or release is closed (and return "done"); reads of "panic"
// panic. Reads of all three reach the daemon (direct I/O).
type waitTree struct {
	fs.Inode
	release     chan struct{}
	releaseOnce sync.Once
	waiting     atomic.Int32 // reads of "block" waiting now
	interrupted atomic.Int32 // reads of "block" that ended by interrupt
}

func newWaitTree() *waitTree { return &waitTree{release: make(chan struct{})} }

// letGo releases the waiting reads; it may be called more than once.
func (r *waitTree) letGo() { r.releaseOnce.Do(func() { close(r.release) }) }

func (r *waitTree) OnAdd(ctx context.Context) {
	r.AddChild("f", r.NewPersistentInode(ctx, &fs.MemRegularFile{Data: []byte("hello"), Attr: fuse.Attr{Mode: 0o644}}, fs.StableAttr{Ino: 2}), false)
	r.AddChild("block", r.NewPersistentInode(ctx, &waitFile{t: r}, fs.StableAttr{Ino: 3}), false)
	r.AddChild("panic", r.NewPersistentInode(ctx, &waitFile{t: r, panics: true}, fs.StableAttr{Ino: 4}), false)
}

// waitFile is "block" or "panic" of a waitTree.
type waitFile struct {
	fs.Inode
	t      *waitTree
	panics bool
}

var (
	_ fs.NodeOpener    = (*waitFile)(nil)
	_ fs.NodeReader    = (*waitFile)(nil)
	_ fs.NodeGetattrer = (*waitFile)(nil)
)

func (f *waitFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (f *waitFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode, out.Size = fuse.S_IFREG|0o644, 4
	return 0
}

func (f *waitFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if f.panics {
		panic("injected panic in READ")
	}
	f.t.waiting.Add(1)
	defer f.t.waiting.Add(-1)
	select {
	case <-ctx.Done():
		f.t.interrupted.Add(1)
		return nil, syscall.EINTR
	case <-f.t.release:
		return fuse.ReadResultData([]byte("done")), 0
	}
}

// waitParams are the mount options of a waitTree: read-only, no caches.
var waitParams = mountopts.Params{CipherDir: "fuseserve-test", ReadOnly: true, SharedStorage: true}

// waitFor waits until cond holds, for at most testutil.RunTimeout (a hang
// detector, not a speed assertion), and fails the test if it never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testutil.WaitFor(testutil.RunTimeout, cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// checkRing checks, on io_uring, that no READ came through /dev/fuse and
// that at least minInterrupts INTERRUPTs did.
func checkRing(t *testing.T, srv *Server, want Transport, minInterrupts uint64) {
	t.Helper()
	if want != TransportURing {
		return
	}
	st := srv.Stats()
	if st.DevByOpcode[opRead] != 0 {
		t.Errorf("%d READ requests came through /dev/fuse, want all on the rings", st.DevByOpcode[opRead])
	}
	if n := st.DevByOpcode[opInterrupt]; n < minInterrupts {
		t.Errorf("%d INTERRUPT requests came through /dev/fuse, want at least %d", n, minInterrupts)
	}
}

// TestInterruptWaitingRead: a read waiting in the daemon ends as soon as
// its caller is killed (SIGKILL: the kernel sends INTERRUPT and waits for
// the answer, the caller stays in D state until then) or gets a signal
// (EINTR), without the file being released. On io_uring the INTERRUPT
// comes through /dev/fuse and must reach the request served from a ring
// entry.
func TestInterruptWaitingRead(t *testing.T) {
	eachTransport(t, func(t *testing.T, want Transport) {
		root := newWaitTree()
		mnt, srv := mountRoot(t, root, waitParams, Options{}, want)
		block := filepath.Join(mnt, "block")
		defer root.letGo() // lets whatever still waits finish
		t.Run("SIGKILL", func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), childEnv+"="+block)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the child's read waits in the daemon", func() bool { return root.waiting.Load() == 1 })
			cmd.Process.Kill()
			// The hang detector: a read that only the release ends
			// would keep the child until RunTimeout.
			if err := testutil.WaitExit(cmd, testutil.RunTimeout); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Errorf("killed reader: %v, want killed", err)
			}
			if n := root.interrupted.Load(); n < 1 {
				t.Errorf("%d reads ended by interrupt, want the killed one", n)
			}
			checkRing(t, srv, want, 1)
		})
		t.Run("signal", func(t *testing.T) {
			root.interrupted.Store(0)
			// A thread of this process waits in read(2); SIGURG (which
			// the Go runtime handles and ignores) interrupts it.
			f, err := os.Open(block)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tid := make(chan int)
			res := make(chan error, 1)
			var sent atomic.Bool
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				tid <- unix.Gettid()
				for {
					_, err := unix.Pread(int(f.Fd()), make([]byte, 16), 0)
					if err == unix.EINTR && !sent.Load() {
						continue // an interrupt before ours (see readRetry)
					}
					res <- err
					return
				}
			}()
			id := <-tid
			waitFor(t, "the read waits in the daemon", func() bool { return root.waiting.Load() == 1 })
			sent.Store(true)
			if err := unix.Tgkill(os.Getpid(), id, unix.SIGURG); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-res:
				if !errors.Is(err, unix.EINTR) {
					t.Errorf("interrupted read: %v, want EINTR", err)
				}
			case <-time.After(testutil.RunTimeout):
				t.Fatal("a read interrupted by a signal still waits")
			}
			checkRing(t, srv, want, 2)
		})
	})
}

// TestPanicInRequest: a panic while serving a request fails that request
// with EIO; the mount keeps working.
func TestPanicInRequest(t *testing.T) {
	eachTransport(t, func(t *testing.T, want Transport) {
		logs := &testutil.SyncBuffer{}
		mnt, srv := mountRoot(t, newWaitTree(), waitParams, Options{Log: logs.Logger(slog.LevelDebug)}, want)
		for range 3 {
			if _, err := os.ReadFile(filepath.Join(mnt, "panic")); !errors.Is(err, syscall.EIO) {
				t.Errorf("read with a panic: %v, want EIO", err)
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(b) != "hello" {
				t.Fatalf("after a panic: read %q, %v", b, err)
			}
		}
		checkRing(t, srv, want, 0)
	})
}

// startRead starts a read of p in a goroutine; the result comes on the
// channel.
func startRead(t *testing.T, p string) <-chan error {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		err := readRetry(int(f.Fd()))
		f.Close()
		res <- err
	}()
	return res
}

// readRetry reads from fd, again after EINTR. The Go runtime signals its
// threads (SIGURG preempts a goroutine, for a garbage collection among
// others), and a signal that reaches a thread while it waits in a FUSE
// read interrupts the request: the daemon sees an INTERRUPT, the waiting
// Read of "block" ends, and the read fails with EINTR. Under load that
// happened about once in 25 runs of the package (the test then waited for
// a read that was no longer there). A program reads again, and so do the
// tests that wait for a read; those that count interrupts count at least
// the ones they cause.
func readRetry(fd int) error {
	for {
		_, err := unix.Pread(fd, make([]byte, 16), 0)
		if err != unix.EINTR {
			return err
		}
	}
}

// waitServed waits for srv.Wait; if it has not returned after
// testutil.RunTimeout (a hang detector), it releases root's waiting
// requests and fails the test.
func waitServed(t *testing.T, srv *Server, root *waitTree, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		srv.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testutil.RunTimeout):
		root.letGo()
		<-done
		t.Fatalf("Wait returned only after the waiting request was released (%s)", what)
	}
}

// TestUnmountInFlight: a connection aborted (umount -f, or the fusectl
// abort file) while a request waits in the daemon fails the request for
// its caller at once, cancels it in the daemon, and Wait returns without
// anyone releasing it; a lazy unmount while a request waits lets the
// request finish and the connection end after it.
func TestUnmountInFlight(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("aborting a FUSE connection needs root")
	}
	eachTransport(t, func(t *testing.T, want Transport) {
		t.Run("abort", func(t *testing.T) {
			root := newWaitTree()
			mnt, srv := mountRoot(t, root, waitParams, Options{}, want)
			res := startRead(t, filepath.Join(mnt, "block"))
			waitFor(t, "the read waits in the daemon", func() bool { return root.waiting.Load() == 1 })
			if err := os.WriteFile(testutil.ConnAbortFile(t, mnt), []byte("1"), 0); err != nil {
				t.Fatal(err)
			}
			if err := <-res; !errors.Is(err, unix.ECONNABORTED) && !errors.Is(err, unix.ENOTCONN) {
				t.Errorf("read on the aborted connection: %v, want ECONNABORTED", err)
			}
			waitServed(t, srv, root, "abort")
			if n := root.interrupted.Load(); n < 1 {
				t.Errorf("%d waiting reads cancelled, want the waiting one", n)
			}
		})
		t.Run("lazy", func(t *testing.T) {
			root := newWaitTree()
			mnt, srv := mountRoot(t, root, waitParams, Options{}, want)
			res := startRead(t, filepath.Join(mnt, "block"))
			waitFor(t, "the read waits in the daemon", func() bool { return root.waiting.Load() == 1 })
			if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
				t.Fatal(err)
			}
			root.letGo()
			if err := <-res; err != nil {
				t.Errorf("read across a lazy unmount: %v", err)
			}
			waitServed(t, srv, root, "lazy unmount")
		})
	})
}

// TestURingQueuesGrow: requests that wait in the daemon keep their ring
// entry, so a queue whose entries are all taken grows, entry by entry, up
// to its limit; requests beyond it wait in the kernel until an entry is
// free. Here every request comes from one CPU, so all go to its queue:
// readers start one after the other (the kernel hands a request only to
// an entry that is free when the request comes, or to one that just
// answered: an entry registered later does not pick up a request that
// already waits, so a burst larger than the free entries waits for the
// next answer), then a burst goes beyond the limit. When the waiting
// requests are released, every one completes.
func TestURingQueuesGrow(t *testing.T) {
	testutil.SetURing(t, true)
	const limit = 256 // fuseuring's default Config.MaxEntries
	const readers = limit + 44
	root := newWaitTree()
	mnt, srv := mountRoot(t, root, waitParams, Options{}, TransportURing)
	defer func() {
		select {
		case <-root.release:
		default:
			root.letGo()
		}
	}()
	st := srv.Stats()
	// Entries of the other queues: they do not change.
	others := st.RingEntries - st.RingEntries/st.RingQueues
	if st.RingEntries%st.RingQueues != 0 {
		t.Skipf("queues of different sizes at start (%d entries on %d queues): not all CPUs usable", st.RingEntries, st.RingQueues)
	}
	var cpu0 unix.CPUSet
	cpu0.Set(0)
	// Opened before any read waits: an OPEN needs a free entry too.
	var files []*os.File
	for range readers {
		f, err := os.Open(filepath.Join(mnt, "block"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	read := func() {
		f := files[0]
		files = files[1:]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			// The thread is not given back to the runtime: it keeps
			// the affinity.
			runtime.LockOSThread()
			if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
				errs <- err
				return
			}
			b := make([]byte, 16)
			n, err := unix.Pread(int(f.Fd()), b, 0)
			for err == unix.EINTR { // see readRetry
				n, err = unix.Pread(int(f.Fd()), b, 0)
			}
			if err == nil && string(b[:n]) != "done" {
				err = fmt.Errorf("read %q", b[:n])
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	for k := 1; k <= limit; k++ {
		read()
		poll(t, fmt.Sprintf("%d reads wait in the daemon", k), func() bool { return int(root.waiting.Load()) == k })
		if k < limit {
			// The queue grows when its last free entry is taken.
			poll(t, fmt.Sprintf("queue 0 has a free entry beside %d waiting reads", k), func() bool {
				return srv.Stats().RingEntries-others > k
			})
		}
	}
	for range readers - limit {
		read()
	}
	// The reads beyond the limit wait in the kernel: no entry is added.
	if n := srv.Stats().RingEntries - others; n != limit {
		t.Errorf("queue 0 has %d entries with %d reads, want its limit %d", n, readers, limit)
	}
	root.letGo()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("read: %v", err)
	}
	if n := srv.Stats().RingEntries - others; n != limit {
		t.Errorf("queue 0 has %d entries after the burst, want its limit %d", n, limit)
	}
	checkRing(t, srv, TransportURing, 0)
}

// poll waits until cond holds, checking often, for at most
// testutil.RunTimeout (a hang detector), and fails the test if it never
// does.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.RunTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
