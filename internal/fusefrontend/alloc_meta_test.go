package fusefrontend

import (
	"runtime"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Allocation budgets of the metadata hot paths (no mount needed: they
// only use the RootNode). They are today's counts: a change that adds
// allocations to every lookup or listed entry must say so here.
//
// Two thirds of them are github.com/rfjakob/eme's: Transform allocates its
// table of multiples of L and the output on every call (an allocation-free
// EME would bring both paths down to the entry, the name strings and the
// listing's slices).
const (
	// statPath of a file in a cached directory whose name was resolved
	// before: the entry (its backing name comes from the name memo; an
	// EME encryption and base64 took 9 more).
	maxAllocsStat = 4
	// readDir per listed entry (one-block names): the decrypted name
	// (base64 decoding, EME decryption, unpadding), the getdents record
	// and its share of the listing's slices.
	maxAllocsPerEntry = 10.5
)

// TestAllocsMetadata counts the allocations of getattr/lookup (statPath)
// and of a directory listing per entry in steady state.
func TestAllocsMetadata(t *testing.T) {
	rn := allocTestRoot(t)
	const n = 100
	makeListDir(t, rn, n)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var attr fuse.Attr
	stat := func() {
		if err := rn.statPath("d/file-0007", &attr); err != nil {
			t.Fatal(err)
		}
	}
	list := func() { listDirD(t, rn, n) }
	stat()
	list()
	// Few runs: the directory cache entry (1 s) must not expire meanwhile.
	if a := testing.AllocsPerRun(20, stat); a > maxAllocsStat {
		t.Errorf("statPath: %.1f allocations, want <= %d", a, maxAllocsStat)
	} else {
		t.Logf("statPath: %.1f allocations", a)
	}
	if a := testing.AllocsPerRun(5, list) / n; a > maxAllocsPerEntry {
		t.Errorf("readDir: %.2f allocations per entry, want <= %.1f", a, maxAllocsPerEntry)
	} else {
		t.Logf("readDir: %.2f allocations per entry", a)
	}
}
