//go:build repairtesthook

package repair

import (
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// testKillEnv names the environment variable of test builds (tag
// repairtesthook, never in a release): set to N, the process kills itself
// with SIGKILL after the N-th durable change of a repair, so that tests
// can interrupt it at every point.
const testKillEnv = "GOCRYPTFS_TEST_REPAIR_KILL_AFTER"

// testIntEnv is like testKillEnv, but the process sends itself SIGINT
// (the repair then stops at its next check and reports what it did).
const testIntEnv = "GOCRYPTFS_TEST_REPAIR_INT_AFTER"

// steps counts the durable changes of this process.
var steps atomic.Int64

func (r *repairer) step() {
	s := steps.Add(1)
	if n, err := strconv.ParseInt(os.Getenv(testKillEnv), 10, 64); err == nil && s == n {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if n, err := strconv.ParseInt(os.Getenv(testIntEnv), 10, 64); err == nil && s == n {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
}
