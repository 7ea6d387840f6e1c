package fusefrontend

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAtimeDue: relatime's rule decides whether an open may keep the page
// cache (keepcache.go), except on a backing filesystem mounted noatime,
// where the read it would let through cannot move the atime: dropping the
// cache there only costs a reread at every open.
func TestAtimeDue(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	ts := func(sec int64) unix.Timespec { return unix.Timespec{Sec: sec} }
	written := unix.Stat_t{Atim: ts(900_000), Mtim: ts(950_000), Ctim: ts(950_000)} // atime before mtime
	read := unix.Stat_t{Atim: ts(990_000), Mtim: ts(950_000), Ctim: ts(950_000)}    // read since
	old := unix.Stat_t{Atim: ts(1_000), Mtim: ts(500), Ctim: ts(500)}               // read days ago
	for _, c := range []struct {
		name    string
		atime   Atime
		noatime bool
		st      *unix.Stat_t
		want    bool
	}{
		{"relatime after a write", AtimeRelatime, false, &written, true},
		{"relatime after a read", AtimeRelatime, false, &read, false},
		{"relatime a day later", AtimeRelatime, false, &old, true},
		{"relatime, backing noatime", AtimeRelatime, true, &written, false},
		{"noatime", AtimeNoatime, false, &written, false},
		{"strictatime", AtimeStrict, false, &read, true},
		{"strictatime, backing noatime", AtimeStrict, true, &read, true},
	} {
		rn := &RootNode{args: Args{Atime: c.atime}, backingNoatime: c.noatime}
		if got := rn.atimeDue(c.st, now); got != c.want {
			t.Errorf("%s: atimeDue = %v, want %v", c.name, got, c.want)
		}
	}
}
