// Package fuseserve mounts a go-fuse node tree and serves it, as fs.Mount
// does, with what the mount code needs on top, the same for both frontends:
// it counts the requests in flight, so that the caller can wait for the
// last one to finish before it wipes the keys; it counts requests and open
// files, for -idle; it hands the lock owner of every FLUSH to a root that
// forwards locks (LockOwnerCloser); and, when asked (-d), it logs one line
// per FUSE request with its result.
//
// go-fuse's Server.Wait only waits for its reader loops; requests it has
// handed to goroutines of their own may still be running when it returns.
package fuseserve

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseuring"
	"gocryptfs/internal/mountopts"
)

// Options configure Mount.
type Options struct {
	// Trace, if set, receives one debug record per FUSE request: the
	// operation, the node, the main arguments and the result. Nil costs
	// nothing beyond a nil check per request.
	Trace *slog.Logger
	// Log receives debug records about the mount itself (a readahead
	// window that could not be raised). Nil discards them.
	Log *slog.Logger
	// ReadAheadKB, if positive, is the readahead window in KiB that
	// Mount sets on the new mount (mountopts.ReadAheadKB). Only root can
	// raise it; failing to is logged to Log and otherwise harmless.
	ReadAheadKB int
	// Transport picks how requests travel between kernel and daemon;
	// the zero value is TransportAuto.
	Transport Transport
	// AutoClassic, if set, makes TransportAuto choose /dev/fuse, for this
	// reason (mountopts.AutoClassic).
	AutoClassic string
	// Attrs are mount options that Mount sets after mounting, since
	// fusermount3 refuses them (mountopts.Attrs). Unless Attrs.Optional,
	// failing to set them fails the mount (which is undone).
	Attrs mountopts.MountAttrs
	// FatalInterruptsOnly makes reads, writes, truncates and the other
	// data requests give up a wait only when their caller is dying, not
	// on any signal (patience.go). For -sharedstorage, whose requests
	// wait for other mounts' locks.
	FatalInterruptsOnly bool
}

// LockOwnerCloser is implemented by a root node that takes forwarded
// POSIX locks per lock owner. Mount hands it the owner of every FLUSH,
// which the kernel sends on each close(2) of a descriptor with the closing
// process as lock owner: POSIX releases all of a process's locks on a
// file when it closes any descriptor of it. go-fuse's node API does not
// pass the owner on. nodeID is the FUSE node ID (with
// fs.Options.ExternalNodeID the node's StableAttr.Ino). It is called
// concurrently with all other requests and must not block.
type LockOwnerCloser interface {
	CloseLockOwner(nodeID, owner uint64)
}

// Server is a mounted filesystem being served. Its methods are safe for
// concurrent use.
type Server struct {
	srv *fuse.Server
	raw *rawFS
	// transport is TransportURing or TransportClassic; reason says why.
	transport Transport
	reason    string
	// With io_uring (own is set): the mount point and /dev/fuse
	// descriptor we mounted, the rings, and the loop that serves what
	// still comes through /dev/fuse.
	own        bool
	mountPoint string
	fd         int
	ring       *fuseuring.Ring
	dev        *devLoop
	closeOnce  sync.Once
	unmounted  atomic.Bool
}

// Mount mounts root on dir with opts, starts serving and returns once the
// mount is visible. o.Transport picks how requests travel (Transport).
func Mount(dir string, root fs.InodeEmbedder, opts *fs.Options, o Options) (*Server, error) {
	raw := &rawFS{RawFileSystem: fs.NewNodeFS(root, opts), trace: o.Trace, fatalOnly: o.FatalInterruptsOnly}
	if lc, ok := root.(LockOwnerCloser); ok && opts.EnableLocks {
		raw.locks = lc
	}
	var s *Server
	var err error
	switch ok, reason := probe(o); {
	case ok:
		s, err = mountURing(dir, raw, opts, o, reason)
	case o.Transport == TransportURing:
		return nil, fmt.Errorf("-uring=true: %s", reason)
	default:
		s, err = mountClassic(dir, raw, opts, reason)
	}
	if err != nil {
		return nil, err
	}
	raw.watchConn(dir)
	if o.Log != nil {
		o.Log.Debug("FUSE transport", "transport", s.transport.String(), "why", s.reason)
	}
	if o.ReadAheadKB > 0 && magicFD(dir) < 0 {
		if err := raiseReadAhead(dir, o.ReadAheadKB); err != nil && o.Log != nil {
			o.Log.Debug("could not raise the readahead window", "kb", o.ReadAheadKB, "err", err)
		}
	}
	if err := setAttrs(dir, o.Attrs); err != nil {
		if !o.Attrs.Optional {
			if uerr := s.Unmount(); uerr != nil {
				return nil, fmt.Errorf("%w (and unmounting failed: %w)", err, uerr)
			}
			s.Wait()
			return nil, err
		}
		if o.Log != nil {
			o.Log.Info("mount options applied by gocryptfs but not shown in the mount table", "err", err)
		}
	}
	return s, nil
}

// setAttrs applies a to the new mount on dir.
func setAttrs(dir string, a mountopts.MountAttrs) error {
	if a.Empty() {
		return nil
	}
	if magicFD(dir) >= 0 {
		return fmt.Errorf("%w: the mount point is a /dev/fd/N descriptor", errMountAttrs)
	}
	if err := applyMountAttrs(dir, a); err != nil {
		return fmt.Errorf("%w: %w", errMountAttrs, err)
	}
	return nil
}

// probe decides whether to try io_uring for t.
func probe(o Options) (bool, string) {
	switch {
	case o.Transport == TransportClassic:
		return false, "io_uring off: -uring=false"
	case o.Transport == TransportAuto && o.AutoClassic != "":
		return false, "io_uring off: " + o.AutoClassic
	}
	return fuseuring.Probe()
}

// mountClassic mounts through go-fuse, which reads and writes /dev/fuse.
func mountClassic(dir string, raw *rawFS, opts *fs.Options, reason string) (*Server, error) {
	srv, err := fuse.NewServer(raw, dir, &opts.MountOptions)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err
	}
	return &Server{srv: srv, raw: raw, transport: TransportClassic, reason: reason}, nil
}

// Transport returns the transport in use (TransportURing or
// TransportClassic) and why, e.g. "io_uring off:
// /sys/module/fuse/parameters/enable_uring is N".
func (s *Server) Transport() (Transport, string) { return s.transport, s.reason }

// OpCount is the number of requests served so far (FORGET, which the
// kernel sends on its own, aside).
func (s *Server) OpCount() uint64 { return s.raw.ops.Load() }

// OpenFileCount is the number of open file and directory handles.
func (s *Server) OpenFileCount() int64 { return s.raw.openFiles.Load() }

// Unmount unmounts the filesystem and waits until it is no longer served.
// Its error message is one line (oneLineError).
func (s *Server) Unmount() error {
	if err := s.unmount(); err != nil {
		return &oneLineError{err}
	}
	return nil
}

func (s *Server) unmount() error {
	if !s.own {
		return s.srv.Unmount()
	}
	if magicFD(s.mountPoint) >= 0 {
		return fmt.Errorf("cannot unmount magic mountpoint %q; use fusermount3 -u on the real mount point", s.mountPoint)
	}
	if s.unmounted.Load() {
		// We unmounted it already: a second call, as go-fuse allows.
		return nil
	}
	if err := fusermountUnmount(s.mountPoint); err != nil {
		return err
	}
	s.unmounted.Store(true)
	s.waitLoops()
	return nil
}

// oneLineError is err with its message on one line. go-fuse's unmount
// error is fusermount's stderr (ending in a newline), then "(code …)" and
// another newline; printed inside a sentence ("Unmount failed: …. Trying
// lazy unmount.") that split the sentence over three lines.
type oneLineError struct{ err error }

func (e *oneLineError) Error() string { return strings.Join(strings.Fields(e.err.Error()), " ") }
func (e *oneLineError) Unwrap() error { return e.err }

// Wait returns when the filesystem was unmounted (the kernel closed the
// connection) and every request that was in flight has returned.
func (s *Server) Wait() {
	if s.own {
		s.waitLoops()
	} else {
		s.srv.Wait()
	}
	// No reader loop is left, so no request can start any more.
	s.raw.drain()
}

// rawFS wraps the node bridge of go-fuse: every request is counted while it
// runs and, with trace set, logged when it returns.
type rawFS struct {
	fuse.RawFileSystem
	trace *slog.Logger
	locks LockOwnerCloser // nil unless locks are forwarded
	// fatalOnly: Options.FatalInterruptsOnly. mountPoint and mountDev
	// (0: unknown) identify the mount for connAlive; mountPoint is set
	// before mountDev is stored.
	fatalOnly  bool
	mountPoint string
	mountDev   atomic.Uint64
	inflight   sync.WaitGroup
	// ops counts requests other than FORGET; openFiles is the number of
	// open file and directory handles.
	ops       atomic.Uint64
	openFiles atomic.Int64
}

// begin accounts for a request that starts; the caller defers
// inflight.Done.
func (w *rawFS) begin() {
	w.inflight.Add(1)
	w.ops.Add(1)
}

// opened counts a handle that an OPEN, OPENDIR or CREATE with status s
// handed out.
func (w *rawFS) opened(s fuse.Status) {
	if s.Ok() {
		w.openFiles.Add(1)
	}
}

// drain waits for the requests in flight; the caller makes sure that no
// new one starts.
func (w *rawFS) drain() { w.inflight.Wait() }

// log writes the trace line of one request.
func (w *rawFS) log(op string, node uint64, s fuse.Status, args ...any) {
	w.trace.Debug("fuse "+op, append([]any{"node", node, "result", statusName(s)}, args...)...)
}

// statusName is "OK" or the errno's symbolic name, e.g. "ENOENT".
func statusName(s fuse.Status) string {
	if s.Ok() {
		return "OK"
	}
	if n := unix.ErrnoName(syscall.Errno(s)); n != "" {
		return n
	}
	return s.String()
}
