package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestNoSyslogHandler: a background mount without syslog says so once, on
// stderr, and only when it has a message.
func TestNoSyslogHandler(t *testing.T) {
	var errOut bytes.Buffer
	log := slog.New(NoSyslogHandler(Options{Stderr: &errOut}, errors.New("no daemon")))
	if errOut.Len() != 0 {
		t.Fatalf("notice before any message: %q", errOut.String())
	}
	log.Info("one")
	log.Warn("two")
	want := "gocryptfs: cannot log to syslog (no daemon), messages of the background mount follow on stderr\none\ntwo\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// fakeMount is a mount whose use the test sets: an open file, or a new
// request before every poll (busy); it refuses the first unmounts.
type fakeMount struct {
	polls, ops atomic.Uint64
	busy       atomic.Bool
	open       atomic.Int64
	refuse     atomic.Int32
	unmounted  atomic.Int32
}

func (f *fakeMount) OpCount() uint64 {
	f.polls.Add(1)
	if f.busy.Load() {
		return f.ops.Add(1)
	}
	return f.ops.Load()
}
func (f *fakeMount) OpenFileCount() int64 { return f.open.Load() }
func (f *fakeMount) Unmount() error {
	if f.refuse.Add(-1) >= 0 {
		return errors.New("busy")
	}
	f.unmounted.Add(1)
	return nil
}

// TestWatchIdle: no unmount while requests arrive or a file is open
// (however long that lasts: each poll sees it), an unmount once idle for
// the whole duration, tried again after a refusal.
func TestWatchIdle(t *testing.T) {
	const idle = 200 * time.Millisecond // polled every 100 ms
	m := &fakeMount{}
	m.refuse.Store(1)
	m.open.Store(1)
	done := make(chan struct{})
	go func() { WatchIdle(slog.New(slog.DiscardHandler), m, idle); close(done) }()
	waitPolls := func(n uint64) {
		start := m.polls.Load()
		for m.polls.Load() < start+n {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitPolls(6) // an open file for 3 idle periods
	m.busy.Store(true)
	m.open.Store(0)
	waitPolls(6) // requests for 3 more
	if m.unmounted.Load() != 0 || m.refuse.Load() != 1 {
		t.Fatal("unmount tried while the mount was in use")
	}
	m.busy.Store(false)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("no unmount after the mount went idle")
	}
	if m.unmounted.Load() != 1 || m.refuse.Load() >= 0 {
		t.Errorf("unmounted %d times, refusals left %d; want 1 unmount after the refusal", m.unmounted.Load(), m.refuse.Load())
	}
}
