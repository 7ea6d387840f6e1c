package fusefrontend

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/nametransform"
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
	cipher := rn.args.CipherDir
	var err error
	iv, err := nametransform.WriteDirIVAt(rn.rootFd)
	if err != nil {
		t.Fatal(err)
	}
	dName, _, err := rn.encryptName("d", iv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(cipher+"/"+dName, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(cipher + "/" + dName)
	if err != nil {
		t.Fatal(err)
	}
	dIV, err := nametransform.WriteDirIVAt(int(fd.Fd()))
	fd.Close()
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		c, _, err := rn.encryptName(fmt.Sprintf("file-%03d", i), dIV)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cipher+"/"+dName+"/"+c, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var attr fuse.Attr
	stat := func() {
		if err := rn.statPath("d/file-007", &attr); err != nil {
			t.Fatal(err)
		}
	}
	list := func() {
		l, err := rn.readDir("d")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.ents) != n {
			t.Fatalf("%d entries, want %d", len(l.ents), n)
		}
		l.Close()
	}
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
