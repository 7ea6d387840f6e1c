package fuseserve

// The io_uring transport: we mount through fusermount3 ourselves to hold
// the /dev/fuse descriptor; go-fuse's Server, given that descriptor as
// /dev/fd/N, answers INIT (offering CAP_OVER_IO_URING) and sends the
// node tree's notifications; one go-fuse ProtocolServer then decodes every
// request, whether it arrives in a ring entry (package fuseuring) or
// through /dev/fuse (FORGET, INTERRUPT), so that an INTERRUPT finds the
// request it cancels whichever way that came.

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseuring"
	"gocryptfs/internal/syscallcompat"
)

// Transport is how FUSE requests travel between the kernel and the
// daemon (-uring).
type Transport int

const (
	// TransportAuto uses io_uring where the kernel offers it and
	// /dev/fuse otherwise (-uring=auto, the default).
	TransportAuto Transport = iota
	// TransportURing uses io_uring or fails to mount (-uring=true).
	TransportURing
	// TransportClassic reads and writes /dev/fuse (-uring=false).
	TransportClassic
)

// ParseTransport parses the value of -uring: auto, true or false.
func ParseTransport(s string) (Transport, error) {
	switch s {
	case "auto":
		return TransportAuto, nil
	case "true":
		return TransportURing, nil
	case "false":
		return TransportClassic, nil
	}
	return TransportAuto, fmt.Errorf("invalid value %q, must be one of auto, true, false", s)
}

// String is "io_uring", "/dev/fuse" or "auto".
func (t Transport) String() string {
	switch t {
	case TransportURing:
		return "io_uring"
	case TransportClassic:
		return "/dev/fuse"
	}
	return "auto"
}

// pollHackName is the name go-fuse's decoder answers in the root
// directory for its poll hack (afterMount).
const pollHackName = ".go-fuse-epoll-hack"

// Opcodes of requests that still travel through /dev/fuse with io_uring.
const (
	opForget      = 2
	opInit        = 26
	opInterrupt   = 36
	opBatchForget = 42
)

// Stats tells how the requests travelled.
type Stats struct {
	// Transport in use, and why.
	Transport Transport
	Reason    string
	// RingRequests were served from ring entries, DevRequests through
	// /dev/fuse (with io_uring: FORGET, INTERRUPT and whatever came
	// before the rings were ready). DevByOpcode counts the latter per
	// FUSE opcode.
	RingRequests, DevRequests uint64
	DevByOpcode               map[uint32]uint64
	// RingQueues and RingEntries describe the rings; PayloadSize is the
	// payload buffer of each entry.
	RingQueues, RingEntries, PayloadSize int
}

// Stats returns the transport and request counts. With the classic
// transport only Transport and Reason are set.
func (s *Server) Stats() Stats {
	st := Stats{Transport: s.transport, Reason: s.reason}
	if s.ring != nil {
		st.RingRequests = s.ring.Served()
		st.RingQueues, st.RingEntries, st.PayloadSize = s.ring.Queues(), s.ring.Entries(), s.ring.PayloadSize()
	}
	if s.dev != nil {
		st.DevByOpcode = map[uint32]uint64{}
		for op := range s.dev.byOp {
			if n := s.dev.byOp[op].Load(); n > 0 {
				st.DevByOpcode[uint32(op)] = n
				st.DevRequests += n
			}
		}
	}
	return st
}

// mountURing mounts dir and serves it over io_uring; where the kernel
// turns it down after all, it serves the same mount through /dev/fuse.
func mountURing(dir string, raw *rawFS, opts *fs.Options, o Options, reason string) (*Server, error) {
	mo := opts.MountOptions
	mo.ExtraCapabilities |= fuse.CAP_OVER_IO_URING
	// The ring buffers must hold max_write: apply go-fuse's default and
	// cap here, before sizing them.
	if mo.MaxWrite <= 0 {
		mo.MaxWrite = 128 << 10
	}
	mo.MaxWrite = min(mo.MaxWrite, fuse.MAX_KERNEL_WRITE)
	s := &Server{raw: raw, own: true, fd: magicFD(dir)}
	if s.fd >= 0 {
		s.mountPoint = dir
	} else {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		s.mountPoint = abs
		if s.fd, err = fusermountMount(abs, &mo); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*Server, error) {
		if magicFD(s.mountPoint) < 0 {
			_ = fusermountUnmount(s.mountPoint)
			_ = unix.Close(s.fd)
		}
		return nil, err
	}
	// go-fuse wraps the descriptor it is given in an os.File, which
	// closes that number when the Server is garbage collected. We close
	// s.fd ourselves (waitLoops, fail) and a magic /dev/fd/N belongs to
	// the caller, so go-fuse gets a duplicate of its own: handing it
	// s.fd let a collected Server close whatever descriptor had the
	// number by then, such as the /dev/fuse or a ring of a later mount
	// in the same process, whose requests then hung for good.
	gofd, err := unix.FcntlInt(uintptr(s.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("duplicating the /dev/fuse descriptor: %w", err))
	}
	srv, err := fuse.NewServer(raw, fmt.Sprintf("/dev/fd/%d", gofd), &mo)
	if err != nil {
		// Not closed here: go-fuse closes it on the errors after it
		// wrapped it.
		return fail(err)
	}
	s.srv = srv
	if srv.KernelSettings().Flags64()&fuse.CAP_OVER_IO_URING == 0 {
		if o.Transport == TransportURing {
			return fail(errors.New("-uring=true: the kernel did not offer io_uring at FUSE INIT"))
		}
		s.transport, s.reason = TransportClassic, "io_uring off: the kernel did not offer it at FUSE INIT"
		s.serveClassic()
		return s.afterMount()
	}
	ps := fuse.NewProtocolServer(raw, &mo)
	if err := initProtocolServer(ps, srv.KernelSettings()); err != nil {
		return fail(err)
	}
	live := &liveSet{m: map[uint64]struct{}{}, handle: ps.HandleRequest}
	s.dev = &devLoop{fd: s.fd, handle: live.serve, live: live, bufSize: mo.MaxWrite + 4096, done: make(chan struct{}), log: o.Log}
	s.ring, err = fuseuring.Start(s.fd, live.serve, fuseuring.Config{MaxWrite: mo.MaxWrite, Log: o.Log, MountPoint: kickPath(s.mountPoint)})
	if err != nil {
		// Entries that did register wait for requests that will not
		// come; they end with the connection.
		if perr := fuseuring.Poison(s.fd); perr != nil {
			return fail(fmt.Errorf("%w; and turning io_uring off failed: %v", err, perr))
		}
		if o.Transport == TransportURing {
			return fail(fmt.Errorf("-uring=true: %w", err))
		}
		s.transport, s.reason = TransportClassic, "io_uring off: "+err.Error()
	} else {
		s.transport, s.reason = TransportURing, reason
	}
	go s.dev.run()
	return s.afterMount()
}

// afterMount does what go-fuse's WaitMount does after mounting: the poll
// hack, where the mount point is known. It opens go-fuse's hack file
// (which the decoder answers itself) and polls it; the POLL gets ENOSYS,
// and the kernel sends no POLL for this mount again. Without it, the
// first file that a Go program opens on the mount sends a POLL (the
// runtime adds every descriptor to its epoll set), from an epoll_ctl that
// the runtime makes as a raw system call, keeping its P: in a process
// that serves the mount itself, a garbage collection then waited for that
// thread while the request waited for a P to be served (TestPosix hung
// for good on io_uring).
func (s *Server) afterMount() (*Server, error) {
	if magicFD(s.mountPoint) >= 0 {
		return s, nil
	}
	fd, err := syscallcompat.RetryInt(func() (int, error) {
		return unix.Open(filepath.Join(s.mountPoint, pollHackName), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		if uerr := s.Unmount(); uerr != nil {
			return nil, fmt.Errorf("poll hack: %w; unmounting: %v", err, uerr)
		}
		s.Wait()
		return nil, fmt.Errorf("poll hack: %w", err)
	}
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLPRI | unix.POLLOUT}}, 0)
	_ = unix.Close(fd)
	return s, nil
}

// kickPath is the mount point fuseuring may send requests to, or "" for
// a /dev/fd/N mount, whose real mount point we do not know.
func kickPath(mountPoint string) string {
	if magicFD(mountPoint) >= 0 {
		return ""
	}
	return mountPoint
}

// serveClassic serves an own mount with go-fuse's /dev/fuse loop.
func (s *Server) serveClassic() {
	done := make(chan struct{})
	s.dev = &devLoop{done: done}
	go func() {
		s.srv.Serve()
		close(done)
	}()
}

// waitLoops waits until the connection ended and everything serving it
// stopped, then closes our descriptor.
func (s *Server) waitLoops() {
	<-s.dev.done
	if s.ring != nil {
		s.ring.Wait()
	}
	s.closeOnce.Do(func() {
		if s.dev.handle != nil {
			// go-fuse's Serve does this for the classic loop.
			s.raw.OnUnmount()
		}
		if magicFD(s.mountPoint) < 0 {
			_ = unix.Close(s.fd)
		}
	})
}

// initProtocolServer hands ps the INIT that go-fuse's Server answered, so
// that it decodes requests for the same protocol version and flags.
func initProtocolServer(ps *fuse.ProtocolServer, kernel *fuse.InitIn) error {
	in := *kernel
	in.InHeader = fuse.InHeader{Length: uint32(unsafe.Sizeof(in)), Opcode: opInit, Unique: 1}
	out := make([]byte, 256)
	n, st := ps.HandleRequest([][]byte{unsafe.Slice((*byte)(unsafe.Pointer(&in)), unsafe.Sizeof(in))}, [][]byte{out})
	if !st.Ok() || n < 16 {
		return fmt.Errorf("initializing the request decoder: %v", st)
	}
	if oh := (*fuse.OutHeader)(unsafe.Pointer(&out[0])); oh.Status != 0 {
		return fmt.Errorf("initializing the request decoder: %v", fuse.Status(-oh.Status))
	}
	return nil
}

// devLoop serves what comes through /dev/fuse while the rings serve the
// rest: FORGET and INTERRUPT inline, anything else (only before the rings
// are ready) in a goroutine of its own.
type devLoop struct {
	fd      int
	live    *liveSet
	handle  fuseuring.Handler
	bufSize int
	done    chan struct{}
	log     *slog.Logger // nil: nothing is logged
	byOp    [64]atomic.Uint64
	pool    sync.Pool
}

func (d *devLoop) run() {
	defer close(d.done)
	// The connection ended (unmounted or aborted): cancel what is
	// still being served, as go-fuse's own loop does.
	defer d.live.cancelAll()
	buf := make([]byte, d.bufSize)
	for {
		n, err := syscallcompat.RetryInt(func() (int, error) { return unix.Read(d.fd, buf) })
		switch {
		case err == unix.ENOENT || err == unix.EAGAIN:
			// ENOENT: the request was interrupted before we read it.
			continue
		case err == unix.ENODEV:
			// Unmounted or aborted.
			return
		case err != nil:
			// Not expected (the buffer fits any request). The rings
			// go on serving, but FORGET and INTERRUPT no longer
			// are, and retrying would spin: say so, loudly.
			if d.log != nil {
				d.log.Error("reading /dev/fuse failed, no longer serving it", "err", err)
			}
			return
		case n < 40:
			continue
		}
		req := buf[:n]
		op := *(*uint32)(unsafe.Pointer(&req[4]))
		if op < uint32(len(d.byOp)) {
			d.byOp[op].Add(1)
		}
		switch op {
		case opForget, opBatchForget, opInterrupt:
			d.serve(req)
		default:
			c := append([]byte(nil), req...)
			go d.serve(c)
		}
	}
}

// serve answers one request from /dev/fuse.
func (d *devLoop) serve(req []byte) {
	out, _ := d.pool.Get().(*[]byte)
	if out == nil {
		b := make([]byte, d.bufSize)
		out = &b
	}
	defer d.pool.Put(out)
	n, st := d.handle([][]byte{req}, [][]byte{*out})
	if !st.Ok() {
		n = fuseuring.ErrorReply(*out, n, st, *(*uint64)(unsafe.Pointer(&req[8])))
	}
	if n > 0 { // 0: no answer (FORGET, INTERRUPT)
		// ENOENT: the kernel no longer waits for it (interrupted).
		_, _ = unix.Write(d.fd, (*out)[:n])
	}
}

// liveSet knows the requests being served (by their unique), so that they
// can be cancelled when the connection ends: go-fuse's /dev/fuse loop
// then cancels every request in flight (its cancelAll, which a
// ProtocolServer does not export), and a request that waits for
// something that may never come (a -sharedstorage lock held elsewhere)
// returns at once. Without it, an aborted connection (umount -f, the
// fusectl abort file) left such a request, its ring entry and Wait
// waiting until whatever it waited for came.
type liveSet struct {
	handle fuseuring.Handler
	mu     sync.Mutex
	m      map[uint64]struct{}
}

// serve is handle for a request that is tracked while it runs.
func (l *liveSet) serve(in, out [][]byte) (int, fuse.Status) {
	if len(in) == 0 || len(in[0]) < 16 {
		return l.handle(in, out)
	}
	u := *(*uint64)(unsafe.Pointer(&in[0][8]))
	l.mu.Lock()
	l.m[u] = struct{}{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.m, u)
		l.mu.Unlock()
	}()
	return l.handle(in, out)
}

// cancelAll interrupts every request being served, through the same
// decoder as the kernel's INTERRUPTs, until none is left. A request that
// go-fuse does not know yet (about to start) is interrupted again later.
func (l *liveSet) cancelAll() {
	if l == nil {
		return
	}
	var req fuse.InterruptIn // with the InHeader
	req.Length, req.Opcode = uint32(unsafe.Sizeof(req)), opInterrupt
	in := unsafe.Slice((*byte)(unsafe.Pointer(&req)), unsafe.Sizeof(req))
	out := make([]byte, 64)
	done := map[uint64]bool{}
	delay := time.Millisecond
	for {
		l.mu.Lock()
		var todo []uint64
		for u := range l.m {
			if !done[u] {
				todo = append(todo, u)
			}
		}
		left := len(l.m)
		l.mu.Unlock()
		if left == 0 {
			return
		}
		for _, u := range todo {
			req.InHeader.Unique, req.Unique = u|1, u // FUSE_INT_REQ_BIT
			// An interrupt that found its request is not answered
			// (n == 0); EAGAIN: not (yet) known.
			if n, st := l.handle([][]byte{in}, [][]byte{out}); st.Ok() && n == 0 {
				done[u] = true
			}
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}
