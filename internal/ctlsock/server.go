package ctlsock

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrSocketInUse is returned by Listen when the socket path exists and is
// either a socket somebody listens on or not a socket at all.
var ErrSocketInUse = errors.New("control socket path is in use")

// staleProbeTimeout bounds the connection attempt that tells a stale socket
// from a live one.
const staleProbeTimeout = time.Second

// Options configures Listen.
type Options struct {
	// Logger receives debug messages and warnings about failed
	// connections; nil discards them.
	Logger *slog.Logger
}

// Server is a listening control socket. Create it with Listen, start
// answering with Serve, and stop it with Close, which also removes the
// socket file. A nil *Server is valid and does nothing, so that callers
// need no special case when no socket was requested.
type Server struct {
	path string
	ln   *net.UnixListener
	log  *slog.Logger

	// info answers Info requests once the filesystem is mounted
	// (SetInfo); nil before.
	info atomic.Pointer[func() MountInfo]

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen creates the Unix stream socket at path (made absolute). A stale
// socket file nobody listens on is removed first; a live socket or an
// existing non-socket file fails with an error wrapping ErrSocketInUse.
// Connections are accepted by the kernel right away but only answered after
// Serve.
func Listen(path string, opts Options) (*Server, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ctlsock: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := removeStale(abs, log); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: abs, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("ctlsock: listen on %s: %w", abs, err)
	}
	// Close removes the socket file (the default for ListenUnix; stated
	// explicitly because the contract depends on it).
	ln.SetUnlinkOnClose(true)
	return &Server{path: abs, ln: ln, log: log, conns: make(map[net.Conn]struct{})}, nil
}

// removeStale deletes a socket file at path that nobody listens on.
func removeStale(path string, log *slog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ctlsock: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("ctlsock: %s exists and is not a socket: %w", path, ErrSocketInUse)
	}
	c, err := net.DialTimeout("unix", path, staleProbeTimeout)
	if err == nil {
		c.Close()
		return fmt.Errorf("ctlsock: somebody is listening on %s: %w", path, ErrSocketInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("ctlsock: probing %s: %w", path, err)
	}
	log.Info("ctlsock: removing stale socket", "path", path)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ctlsock: removing stale socket: %w", err)
	}
	return nil
}

// Path returns the absolute socket path.
func (s *Server) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// Serve starts answering requests with t in the background. Call it once.
func (s *Server) Serve(t Translator) {
	if s == nil {
		return
	}
	s.wg.Add(1)
	go s.acceptLoop(t)
}

// SetInfo makes Info requests answered with what f returns; until it is
// called they get the error TextNotMounted. The mount calls it once the
// filesystem is mounted. f is called concurrently from the connections'
// goroutines and must be safe for that.
func (s *Server) SetInfo(f func() MountInfo) {
	if s == nil {
		return
	}
	s.info.Store(&f)
}

func (s *Server) acceptLoop(t Translator) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Warn("ctlsock: accept failed, no more requests", "err", err)
			}
			return
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.serveConn(c, t)
	}
}

// track registers an open connection; it refuses once the server is closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// serveConn answers the requests of one connection until the client hangs
// up, sends an oversized request, or the server is closed.
func (s *Server) serveConn(c net.Conn, t Translator) {
	defer s.wg.Done()
	defer s.untrack(c)
	defer c.Close()
	buf := make([]byte, MaxRequestLen)
	for {
		n, err := c.Read(buf)
		if n >= MaxRequestLen {
			s.log.Warn("ctlsock: request too long, closing connection", "maxBytes", MaxRequestLen)
			return
		}
		if n > 0 {
			resp := s.answer(buf[:n], t)
			if _, werr := c.Write(resp.Marshal()); werr != nil {
				s.log.Debug("ctlsock: write failed", "err", werr)
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("ctlsock: read failed", "err", err)
			}
			return
		}
	}
}

func (s *Server) answer(data []byte, t Translator) Response {
	req, bad := parseRequest(data)
	if bad != nil {
		return *bad
	}
	if req.Info {
		var info func() MountInfo
		if f := s.info.Load(); f != nil {
			info = *f
		}
		resp := HandleInfo(info, req)
		s.log.Debug("ctlsock info request", "errno", resp.ErrNo)
		return resp
	}
	resp := Handle(t, req)
	s.log.Debug("ctlsock request", "encrypt", req.EncryptPath, "decrypt", req.DecryptPath,
		"result", resp.Result, "errno", resp.ErrNo)
	return resp
}

// Close stops accepting, closes open connections, waits for their handlers
// and removes the socket file. It is safe to call more than once.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("ctlsock: close: %w", err)
	}
	return nil
}
