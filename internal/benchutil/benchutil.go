// Package benchutil is test support for benchmarks: it measures throughput
// per CPU second of the benchmarking thread, which stays meaningful on a
// machine shared with other work, where wall-clock MB/s swings with the
// load. It is imported only by _test.go files.
package benchutil

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPU returns the CPU time consumed so far by the calling OS thread,
// or 0 if the clock is unavailable.
func ThreadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// LoopCPU runs f in b.Loop with the goroutine locked to its OS thread,
// processing size bytes per call. Besides the usual wall-clock MB/s (and
// allocation figures) it reports "cpuMB/s": bytes per CPU second of that
// thread, cgo calls included since they run on it too.
//
// Work that f hands to other goroutines is not counted in cpuMB/s, which
// then overstates the throughput per CPU second; use ProcessCPU for that.
func LoopCPU(b *testing.B, size int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	c0 := ThreadCPU()
	for b.Loop() {
		f()
	}
	if c := ThreadCPU() - c0; c > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/c.Seconds()/1e6, "cpuMB/s")
	}
}

// ProcessCPU returns the CPU time consumed so far by all threads of the
// process, or 0 if the clock is unavailable.
func ProcessCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// LoopProcessCPU is LoopCPU for f that spreads its work over several
// goroutines: cpuMB/s is bytes per CPU second of the whole process. That
// includes the garbage collector and any other goroutine of the test
// binary, so keep the benchmark free of unrelated background work.
func LoopProcessCPU(b *testing.B, size int, f func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	c0 := ProcessCPU()
	for b.Loop() {
		f()
	}
	if c := ProcessCPU() - c0; c > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/c.Seconds()/1e6, "cpuMB/s")
	}
}
