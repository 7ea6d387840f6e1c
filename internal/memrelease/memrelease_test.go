package memrelease

import (
	"testing"
	"time"
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
