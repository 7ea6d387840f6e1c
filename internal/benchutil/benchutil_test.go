package benchutil

import (
	"runtime"
	"testing"
)

// spin burns CPU until the given clock has advanced by at least 1 ms.
func spin(clock func() int64) {
	start := clock()
	x := 0
	for clock()-start < 1e6 {
		for i := range 1000 {
			x += i
		}
	}
	runtime.KeepAlive(x)
}

func TestClocksAdvance(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, c := range []struct {
		name  string
		clock func() int64
	}{
		{"ThreadCPU", func() int64 { return int64(ThreadCPU()) }},
		{"ProcessCPU", func() int64 { return int64(ProcessCPU()) }},
	} {
		if c.clock() <= 0 {
			t.Fatalf("%s: clock unavailable", c.name)
		}
		spin(c.clock) // returns only if the clock advances
	}
	// The process has used at least as much CPU as this thread.
	if p, th := ProcessCPU(), ThreadCPU(); p < th {
		t.Errorf("process CPU %v < thread CPU %v", p, th)
	}
}

func BenchmarkLoopCPU(b *testing.B) {
	buf := make([]byte, 4096)
	LoopCPU(b, len(buf), func() { clear(buf) })
}

func BenchmarkLoopProcessCPU(b *testing.B) {
	buf := make([]byte, 4096)
	LoopProcessCPU(b, len(buf), func() { clear(buf) })
}
