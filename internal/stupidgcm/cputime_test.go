package stupidgcm

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time consumed by the calling OS thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// loopCPU runs f in a b.Loop with the goroutine locked to its thread and
// reports, besides the usual wall-clock MB/s, "cpuMB/s": throughput per CPU
// second of that thread (cgo calls run on it too). On a machine shared with
// other work the wall-clock figure swings with the load; the CPU-time one
// much less.
func loopCPU(b *testing.B, size int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	c0 := threadCPU()
	for b.Loop() {
		f()
	}
	if c := threadCPU() - c0; c > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/c.Seconds()/1e6, "cpuMB/s")
	}
}
