// Package memrelease gives a daemon's unused heap memory back to the
// operating system once a burst of activity is over, and keeps a large
// heap from doubling before each garbage collection.
//
// The Go runtime keeps freed heap pages mapped for reuse and returns them
// only gradually, so a mount that has just served, say, a recursive stat
// of 60,000 files keeps the garbage of that burst in its RSS long after
// the burst. Watch notices the end of a burst (an activity counter that
// grew and then stood still for one interval) and then runs two full
// garbage collections, the second of which releases the freed pages
// (runtime/debug.FreeOSMemory). An idle or a continuously busy daemon is
// never disturbed, and a burst that allocated little (less than half the
// live heap) is not worth the two collections.
//
// With the default GOGC of 100 the heap grows to twice the live heap
// before the next collection: with tens of MiB of inodes that is tens of
// MiB of garbage in RSS during a burst, and the inodes made meanwhile
// land in pages shared with that garbage, which stay resident after it
// is freed. Watch sets GOGC 50. Measured on a recursive stat of 60,000
// files, means of 4 runs: RSS at the end of it 48.6 -> 44.6 MiB, after
// the release 42.4 -> 40.1 MiB; daemon CPU 0.56 -> 0.68 s (GOGC 25 kept
// about as much and cost 0.84 s).
//
// A small heap is the opposite case: with 10 MiB live (the inodes of an
// untar of Go's source tree), GOGC 50 collects after every 5 MiB, and
// every FUSE request allocates about a kilobyte in go-fuse alone: 70
// collections per untar, whose mark workers take the CPUs that the
// application and the daemon's request threads are waiting for. While a
// burst lasts, Watch therefore lets the heap grow by at least
// busyHeadroom over the live heap (GOGC up to maxBusyGOGC); a large heap
// keeps GOGC 50. The burst's garbage is released at its end as before.
package memrelease

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Options configure Watch.
type Options struct {
	// Count returns a counter that grows with activity, e.g. the number
	// of requests served.
	Count func() uint64
	// Interval is how long the counter must stand still after growing
	// (default 0.5 s).
	Interval time.Duration
	// TuneGC lets Watch set the GC target (debug.SetGCPercent) while it
	// runs; leave it off when the user chose one (GOGC in the
	// environment).
	TuneGC bool
}

const (
	// lowGOGC is the GC target Watch sets, defaultGOGC the Go default.
	lowGOGC, defaultGOGC = 50, 100
	// busyHeadroom is the least growth of the heap between collections
	// while a burst lasts, maxBusyGOGC the highest GC target Watch sets
	// for it (busyGOGC).
	busyHeadroom = 16 << 20
	maxBusyGOGC  = 400
	// minGarbage is the least allocation since the last release that
	// makes a release worthwhile.
	minGarbage = 4 << 20
)

// Watch checks o.Count every o.Interval until stop is closed and releases
// memory once after each burst of activity. Run it in its own goroutine.
func Watch(o Options, stop <-chan struct{}) {
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	b := burst{last: o.Count()}
	var h heapStats
	h.read()
	released := h.allocs
	gogc := 0 // the target Watch last set; none yet
	setGOGC := func(p int) {
		if o.TuneGC && p != gogc {
			debug.SetGCPercent(p)
			gogc = p
		}
	}
	setGOGC(lowGOGC)
	if o.TuneGC {
		defer debug.SetGCPercent(defaultGOGC)
	}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		h.read()
		ended := b.ended(o.Count())
		if b.busy {
			setGOGC(busyGOGC(h.live))
		} else {
			setGOGC(lowGOGC)
		}
		if ended && worthReleasing(h.allocs-released, h.live) {
			// The first collection moves sync.Pool contents (e.g.
			// go-fuse's request buffers) to the pools' victim caches,
			// the second frees them and returns the pages.
			runtime.GC()
			debug.FreeOSMemory()
			h.read()
			released = h.allocs
		}
	}
}

// busyGOGC is the GC target while a burst lasts with live bytes of live
// heap: lowGOGC, or more where that would let the heap grow by less than
// busyHeadroom, at most maxBusyGOGC. Rounded to steps of 50, so that a
// heap that changes a little does not change the target each time.
func busyGOGC(live uint64) int {
	if live == 0 {
		return lowGOGC
	}
	p := int(min(uint64(busyHeadroom)*100/live, maxBusyGOGC))
	return max(lowGOGC, p/50*50)
}

// worthReleasing reports whether allocated bytes since the last release
// left enough garbage to pay for two collections of a live heap of live
// bytes.
func worthReleasing(allocated, live uint64) bool {
	return allocated >= minGarbage && allocated >= live/2
}

// heapStats are the runtime's heap figures Watch uses, read without
// stopping the world (runtime/metrics, unlike runtime.ReadMemStats).
type heapStats struct {
	samples []metrics.Sample
	// live is the heap marked live by the last collection, allocs the
	// bytes allocated since the program started.
	live, allocs uint64
}

func (h *heapStats) read() {
	if h.samples == nil {
		h.samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	}
	metrics.Read(h.samples)
	h.live, h.allocs = value(h.samples[0]), value(h.samples[1])
}

// value returns a sample's value, 0 if the runtime does not know it.
func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
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
