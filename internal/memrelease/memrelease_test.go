package memrelease

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// TestBurstEnded: no release while idle from the start or while the
// counter keeps growing; exactly one after each burst.
func TestBurstEnded(t *testing.T) {
	b := burst{last: 5}
	samples := []struct {
		n    uint64
		want bool
	}{
		{5, false}, {5, false}, // idle from the start
		{9, false}, {12, false}, {20, false}, // a burst
		{20, true}, {20, false}, {20, false}, // its end: once
		{21, false}, {21, true}, // a second burst
	}
	for i, s := range samples {
		if got := b.ended(s.n); got != s.want {
			t.Fatalf("sample %d (%d): ended=%v, want %v", i, s.n, got, s.want)
		}
	}
}

// TestWatchStops: Watch returns when stop is closed.
func TestWatchStops(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		Watch(Options{Count: func() uint64 { return 0 }, Interval: time.Millisecond}, stop)
		close(done)
	}()
	close(stop)
	<-done
}

// TestWorthReleasing: a release needs 4 MiB and half the live heap
// allocated since the last one.
func TestWorthReleasing(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		allocated, live uint64
		want            bool
	}{
		{0, 0, false}, {4*mib - 1, 1 * mib, false}, {4 * mib, 1 * mib, true},
		{10 * mib, 30 * mib, false}, {15 * mib, 30 * mib, true},
	} {
		if got := worthReleasing(c.allocated, c.live); got != c.want {
			t.Errorf("worthReleasing(%d, %d) = %v, want %v", c.allocated, c.live, got, c.want)
		}
	}
}

// TestHeapStats: the runtime knows both metrics Watch reads.
func TestHeapStats(t *testing.T) {
	var h heapStats
	buf := make([]byte, 1<<20)
	h.read()
	if h.allocs < uint64(len(buf)) {
		t.Errorf("allocs = %d after allocating %d bytes", h.allocs, len(buf))
	}
	runtime.GC()
	h.read()
	if h.live == 0 {
		t.Error("live heap 0 after a collection")
	}
	runtime.KeepAlive(buf)
}

// TestBusyGOGC: a heap too small to grow by busyHeadroom at GOGC 50 gets
// a higher target, in steps of 50 and at most maxBusyGOGC; a large one
// keeps 50.
func TestBusyGOGC(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, lowGOGC}, {1 * mib, maxBusyGOGC}, {4 * mib, maxBusyGOGC}, {10 * mib, 150},
		{16 * mib, 100}, {32 * mib, lowGOGC}, {500 * mib, lowGOGC},
	} {
		if got := busyGOGC(c.live); got != c.want {
			t.Errorf("busyGOGC(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

// TestWatchTunesGC: with TuneGC, Watch sets GOGC 50, raises it while the
// counter grows (this test's heap is small) and lowers it again when the
// burst ends; it restores the default when stopped.
func TestWatchTunesGC(t *testing.T) {
	gogc := func() int {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int(s[0].Value.Uint64())
	}
	var n atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		Watch(Options{Count: func() uint64 { return n.Load() }, Interval: time.Millisecond, TuneGC: true}, stop)
		close(done)
	}()
	if !testutil.WaitFor(testutil.RunTimeout, func() bool { return gogc() == lowGOGC }) {
		t.Fatalf("GOGC %d while idle, want %d", gogc(), lowGOGC)
	}
	busy := make(chan struct{})
	go func() {
		for {
			select {
			case <-busy:
				return
			default:
				n.Add(1)
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	if !testutil.WaitFor(testutil.RunTimeout, func() bool { return gogc() > lowGOGC }) {
		t.Errorf("GOGC %d during a burst, want more than %d", gogc(), lowGOGC)
	}
	close(busy)
	if !testutil.WaitFor(testutil.RunTimeout, func() bool { return gogc() == lowGOGC }) {
		t.Errorf("GOGC %d after the burst, want %d", gogc(), lowGOGC)
	}
	close(stop)
	<-done
	if got := gogc(); got != defaultGOGC {
		t.Errorf("GOGC %d after Watch stopped, want %d", got, defaultGOGC)
	}
}
