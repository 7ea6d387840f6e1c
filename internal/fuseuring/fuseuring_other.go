//go:build !linux

package fuseuring

import (
	"fmt"
	"runtime"
)

// FUSE over io_uring is Linux only: here Probe says so and Start and
// Poison fail, so that the callers build unchanged and fall back to (or
// refuse, for -uring=true) the /dev/fuse transport.

// Ring is never started here; its methods report an empty ring.
type Ring struct{}

// errNotSupported is what Start and Poison return.
var errNotSupported = fmt.Errorf("FUSE over io_uring: not supported on %s", runtime.GOOS)

// Probe reports that there is no FUSE over io_uring on this system.
func Probe() (ok bool, reason string) {
	return false, "io_uring off: not supported on " + runtime.GOOS
}

// Start fails: not supported on this system.
func Start(fuseFD int, h Handler, cfg Config) (*Ring, error) { return nil, errNotSupported }

// Poison fails: not supported on this system.
func Poison(fuseFD int) error { return errNotSupported }

// Wait returns at once.
func (r *Ring) Wait() {}

// Served is 0.
func (r *Ring) Served() uint64 { return 0 }

// Entries is 0.
func (r *Ring) Entries() int { return 0 }

// Queues is 0.
func (r *Ring) Queues() int { return 0 }

// PayloadSize is 0.
func (r *Ring) PayloadSize() int { return 0 }
