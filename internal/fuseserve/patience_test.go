//go:build linux

package fuseserve

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCallerDying: a live thread without a fatal signal is not dying; a
// thread ID that does not exist is (nobody waits for the answer). The
// fatal-signal case is tests/cli's TestSharedStorageWriteSignal.
func TestCallerDying(t *testing.T) {
	if callerDying(uint32(unix.Gettid())) {
		t.Error("this thread counts as dying")
	}
	if !callerDying(1 << 30) {
		t.Error("a thread that does not exist does not count as dying")
	}
}

// TestPatient: without FatalInterruptsOnly the cancel channel is passed
// on as it is; with it, an interrupt of a live caller does not close the
// channel handed on, and one of a caller that is gone does.
func TestPatient(t *testing.T) {
	cancel := make(chan struct{})
	w := &rawFS{}
	if c, end := w.patient(cancel, 1); c != cancel {
		t.Error("without FatalInterruptsOnly: the channel was replaced")
	} else {
		end()
	}
	w.fatalOnly = true
	live, endLive := w.patient(cancel, uint32(unix.Gettid()))
	gone, endGone := w.patient(cancel, 1<<30)
	defer endLive()
	defer endGone()
	close(cancel)
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Error("interrupt of a caller that is gone: the wait goes on")
	}
	select {
	case <-live:
		t.Error("interrupt of a live caller ended the wait")
	case <-time.After(3 * dyingPoll):
	}
}
