// Package memrelease gives a daemon's unused heap memory back to the
// operating system once a burst of activity is over. The Go runtime keeps
// freed heap pages mapped for reuse and returns them only gradually, so a
// mount that has just served, say, a recursive stat of 60,000 files keeps
// the garbage of that burst in its RSS long after the burst. Watch notices
// the end of a burst (an activity counter that grew and then stood still
// for one interval) and then runs two full garbage collections, the
// second of which releases the freed pages (runtime/debug.FreeOSMemory). An idle or a
// continuously busy daemon is never disturbed.
package memrelease

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Options configure Watch.
type Options struct {
	// Count returns a counter that grows with activity, e.g. the number
	// of requests served.
	Count func() uint64
	// Interval is how long the counter must stand still after growing
	// (default 2 s).
	Interval time.Duration
}

// Watch checks o.Count every o.Interval until stop is closed and releases
// memory once after each burst of activity. Run it in its own goroutine.
func Watch(o Options, stop <-chan struct{}) {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	b := burst{last: o.Count()}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if b.ended(o.Count()) {
			// The first collection moves sync.Pool contents (e.g.
			// go-fuse's request buffers) to the pools' victim caches,
			// the second frees them and returns the pages.
			runtime.GC()
			debug.FreeOSMemory()
		}
	}
}

// burst tracks an activity counter sampled at regular intervals.
type burst struct {
	last uint64
	busy bool
}

// ended takes the next sample and reports whether a burst just ended: the
// counter grew since an earlier sample and not since the previous one.
func (b *burst) ended(n uint64) bool {
	if n != b.last {
		b.last, b.busy = n, true
		return false
	}
	if b.busy {
		b.busy = false
		return true
	}
	return false
}
