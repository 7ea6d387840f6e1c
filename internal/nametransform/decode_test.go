package nametransform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/syscallcompat"
)

const (
	testMarker  = ".sync-conflict-20261202-120000-ABCDEFG"
	testMarker2 = ".sync-conflict-20261203-120000-ABCDEFG"
)

// decodeTestDir is a backing directory with one entry of every outcome.
type decodeTestDir struct {
	dir   string
	fd    int
	iv    []byte
	altIV []byte
	enc   func(plain string, iv []byte) string // backing name under iv
}

func newDecodeTestDir(t *testing.T, n *NameTransform) *decodeTestDir {
	t.Helper()
	d := &decodeTestDir{dir: t.TempDir()}
	fd, err := unix.Open(d.dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	d.fd = fd
	if d.iv, err = WriteDirIVAt(fd); err != nil {
		t.Fatal(err)
	}
	d.altIV = []byte("another dir's iv")
	d.enc = func(plain string, iv []byte) string {
		t.Helper()
		enc, err := n.EncryptName(plain, iv)
		if err != nil {
			t.Fatal(err)
		}
		stored, long := n.HashIfLong(enc)
		if long {
			if err := n.WriteLongNameAt(fd, stored, enc); err != nil && !errors.Is(err, unix.EEXIST) {
				t.Fatal(err)
			}
		}
		return stored
	}
	return d
}

func (d *decodeTestDir) touch(t *testing.T, name string, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (d *decodeTestDir) decode(t *testing.T, n *NameTransform, isRoot bool) []DecodedEntry {
	t.Helper()
	ents, err := syscallcompat.Getdents(d.fd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Seek(d.fd, 0, 0); err != nil {
		t.Fatal(err)
	}
	var out []DecodedEntry
	n.DecodeDir(d.fd, ents, d.iv, isRoot, func(e DecodedEntry) { out = append(out, e) })
	checkDecoded(t, ents, out)
	return out
}

// isShown reports whether entries with outcome o appear in the listing.
func isShown(o Outcome) bool {
	return o == Shown || o == ShownConflict || o == ShownBadName
}

// checkDecoded checks DecodeDir's contract that holds for any listing:
// every entry visited exactly once, shown names unique and non-empty,
// errors exactly where the outcome calls for one.
func checkDecoded(t *testing.T, ents []syscallcompat.DirEntry, out []DecodedEntry) {
	t.Helper()
	want := make(map[string]int)
	for _, e := range ents {
		if e.Name != "." && e.Name != ".." {
			want[e.Name]++
		}
	}
	shown := make(map[string]DecodedEntry)
	for _, e := range out {
		want[e.Backing.Name]--
		if isShown(e.Outcome) {
			prev, dup := shown[e.Name]
			// A forged long name may hold another entry's encrypted name.
			forged := dup && e.Outcome == Shown && prev.Outcome == Shown && (e.Kind == KindLongName || prev.Kind == KindLongName)
			if e.Name == "" || dup && !forged {
				t.Fatalf("%q shown as %q, empty or twice", e.Backing.Name, e.Name)
			}
			shown[e.Name] = e
		} else if e.Name != "" {
			t.Fatalf("%q (%v) has a name %q", e.Backing.Name, e.Outcome, e.Name)
		}
		if hasErr := e.Err != nil; hasErr != (e.Outcome == Undecryptable || e.Outcome == BadAltIV || e.Outcome == ShownBadName) {
			t.Fatalf("%q (%v): err %v", e.Backing.Name, e.Outcome, e.Err)
		}
	}
	for name, c := range want {
		if c != 0 {
			t.Fatalf("%q visited %d times too few", name, c)
		}
	}
}

// TestDecodeDir lists a directory holding one entry of every outcome and
// checks each one's outcome, shown name and the order of the visits.
func TestDecodeDir(t *testing.T) {
	for _, badname := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "badname"}[badname], func(t *testing.T) {
			opts := defaultOpts
			if badname {
				opts.BadnamePatterns = []string{"junk*"}
			}
			n := newNT(t, cryptocore.AESGCM, true, opts)
			d := newDecodeTestDir(t, n)
			long := strings.Repeat("x", 200)
			a, lng := d.enc("a", d.iv), d.enc(long, d.iv)
			d.touch(t, a, "")
			d.touch(t, lng, "")
			d.touch(t, a+testMarker, "")                                    // conflict copy of "a"
			d.touch(t, d.enc("taken"+testMarker, d.iv), "")                 // takes the name of the next one
			d.touch(t, d.enc("taken", d.iv)+testMarker, "")                 // its decorated name is taken
			d.touch(t, "gocryptfs"+testMarker+".diriv", "another dir's iv") // alternative IV
			d.touch(t, d.enc("secret", d.altIV), "")                        // a name under it
			d.touch(t, "gocryptfs"+testMarker2+".diriv", "short")           // invalid IV copy
			d.touch(t, ".stfolder", "")
			d.touch(t, ConfDefaultName, "{}")
			d.touch(t, "gocryptfs.longname.orphan.name", "x")
			d.touch(t, "junk", "")
			got := d.decode(t, n, true)
			byName := make(map[string]DecodedEntry)
			for _, e := range got {
				byName[e.Backing.Name] = e
			}
			junk := DecodedEntry{Outcome: Undecryptable}
			if badname {
				junk = DecodedEntry{Outcome: ShownBadName, Name: "junk" + BadNameSuffix}
			}
			cases := []struct {
				backing string
				want    DecodedEntry
			}{
				{a, DecodedEntry{Outcome: Shown, Name: "a"}},
				{lng, DecodedEntry{Outcome: Shown, Name: long, Kind: KindLongName}},
				{lng + LongNameSuffix, DecodedEntry{Outcome: Internal, Kind: KindLongNameFile}},
				{a + testMarker, DecodedEntry{Outcome: ShownConflict, Name: "a" + testMarker}},
				{d.enc("taken"+testMarker, d.iv), DecodedEntry{Outcome: Shown, Name: "taken" + testMarker}},
				{d.enc("taken", d.iv) + testMarker, DecodedEntry{Outcome: Undecryptable}},
				{"gocryptfs" + testMarker + ".diriv", DecodedEntry{Outcome: SyncToolFile}},
				{d.enc("secret", d.altIV), DecodedEntry{Outcome: ShownConflict, Name: "secret" + testMarker, AltIV: "gocryptfs" + testMarker + ".diriv"}},
				{"gocryptfs" + testMarker2 + ".diriv", DecodedEntry{Outcome: BadAltIV}},
				{".stfolder", DecodedEntry{Outcome: SyncToolFile}},
				{ConfDefaultName, DecodedEntry{Outcome: Internal, Kind: KindConfig}},
				{DirIVFilename, DecodedEntry{Outcome: Internal, Kind: KindDirIV}},
				{"gocryptfs.longname.orphan.name", DecodedEntry{Outcome: Internal, Kind: KindLongNameFile}},
				{"junk", junk},
			}
			if len(got) != len(cases) {
				t.Errorf("%d entries visited, want %d", len(got), len(cases))
			}
			for _, c := range cases {
				e, ok := byName[c.backing]
				if !ok {
					t.Errorf("%q not visited", c.backing)
					continue
				}
				if e.Outcome != c.want.Outcome || e.Name != c.want.Name || e.AltIV != c.want.AltIV || e.Kind != c.want.Kind {
					t.Errorf("%q: %v %q kind %v alt %q, want %v %q kind %v alt %q", c.backing, e.Outcome, e.Name, e.Kind, e.AltIV,
						c.want.Outcome, c.want.Name, c.want.Kind, c.want.AltIV)
				}
			}
			if e := byName["gocryptfs"+testMarker2+".diriv"]; !errors.Is(e.Err, ErrBadDirIV) {
				t.Errorf("invalid IV copy: err %v, want ErrBadDirIV", e.Err)
			}
			// Order: what decrypted under the main IV, then the invalid
			// IV copies, then the rest.
			phase := func(e DecodedEntry) int {
				switch {
				case e.Outcome == BadAltIV:
					return 1
				case e.Outcome == ShownConflict || e.Outcome == ShownBadName || e.Outcome == Undecryptable:
					return 2
				}
				return 0
			}
			for i := 1; i < len(got); i++ {
				if phase(got[i]) < phase(got[i-1]) {
					t.Errorf("%q (%v) visited after %q (%v)", got[i].Backing.Name, got[i].Outcome, got[i-1].Backing.Name, got[i-1].Outcome)
				}
			}
		})
	}
}

// TestDecodeDirModes checks the naming modes without directory IVs: no
// alternative IVs are read, and in PlaintextNames mode only the config
// is the filesystem's own file.
func TestDecodeDirModes(t *testing.T) {
	t.Run("plaintextnames", func(t *testing.T) {
		n := newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true})
		d := newDecodeTestDir(t, n)
		d.iv = nil
		d.touch(t, ConfDefaultName, "{}")
		d.touch(t, "gocryptfs"+testMarker+".diriv", "another dir's iv")
		got := d.decode(t, n, true)
		want := map[string]Outcome{ConfDefaultName: Internal, DirIVFilename: Shown, "gocryptfs" + testMarker + ".diriv": Shown}
		for _, e := range got {
			if e.Outcome != want[e.Backing.Name] {
				t.Errorf("%q: %v, want %v", e.Backing.Name, e.Outcome, want[e.Backing.Name])
			}
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		n := newNT(t, cryptocore.AESGCM, true, Options{Raw64: true, DeterministicNames: true})
		d := newDecodeTestDir(t, n)
		d.iv = nil
		d.touch(t, d.enc("a", nil), "")
		d.touch(t, "gocryptfs"+testMarker+".diriv", "short")
		for _, e := range d.decode(t, n, false) {
			if e.Outcome == BadAltIV || (e.Backing.Name == d.enc("a", nil)) != (e.Outcome == Shown) {
				t.Errorf("%q: %v", e.Backing.Name, e.Outcome)
			}
		}
	})
}

// TestNameEntries: the entries that stand for plaintext entries are what
// DecodeDir tries to decrypt.
func TestNameEntries(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	ents := []syscallcompat.DirEntry{{Name: "x"}, {Name: DirIVFilename}, {Name: ConfDefaultName}, {Name: "gocryptfs.longname.h"},
		{Name: "gocryptfs.longname.h.name"}, {Name: QuarantineDirName}, {Name: "."}}
	got := strings.Join(n.NameEntries(ents, true), ",")
	if want := "x,gocryptfs.longname.h"; got != want {
		t.Errorf("root: %s, want %s", got, want)
	}
	got = strings.Join(n.NameEntries(ents, false), ",")
	if want := "x,gocryptfs.conf,gocryptfs.longname.h,gocryptfs.quarantine"; got != want {
		t.Errorf("subdirectory: %s, want %s", got, want)
	}
}

// FuzzDecodeDir decodes listings of hostile names (everything in
// CIPHERDIR may be forged, docs/threat-model.md) in a directory that also
// holds an alternative IV, an invalid IV copy and a long name's companion
// file with hostile content. DecodeDir must not panic and must keep its
// contract (checkDecoded). names separates the entries with "/", which
// getdents never returns inside a name (nor NUL).
func FuzzDecodeDir(f *testing.F) {
	modes := []*NameTransform{
		newNT(f, cryptocore.AESGCM, true, Options{Raw64: true, BadnamePatterns: []string{"*"}}),
		newNT(f, cryptocore.AESGCM, true, Options{}),
		newNT(f, cryptocore.AESGCM, true, Options{Raw64: true, DeterministicNames: true}),
		newNT(f, cryptocore.AESGCM, true, Options{PlaintextNames: true}),
	}
	for _, s := range []string{
		"RstaWk5xuBGCq94EGMhOoQ/gocryptfs.longname.h/gocryptfs.longname.h.name",
		"gocryptfs.longname.h" + testMarker + "/gocryptfs" + testMarker + ".diriv/gocryptfs" + testMarker2 + ".diriv",
		"RstaWk5xuBGCq94EGMhOoQ (conflicted copy)/RstaWk5xuBGCq94EGMhOoQ (1)/.stfolder/gocryptfs.conf/gocryptfs.diriv",
		"a/a/" + strings.Repeat("A", 300) + "/gocryptfs.quarantine/x" + testMarker,
	} {
		for m := range modes {
			f.Add(s, "RstaWk5xuBGCq94EGMhOoQ", byte(m), true)
		}
	}
	n0 := modes[0]
	dir := f.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		f.Fatal(err)
	}
	defer unix.Close(fd)
	iv, err := WriteDirIVAt(fd)
	if err != nil {
		f.Fatal(err)
	}
	for name, data := range map[string]string{
		"gocryptfs" + testMarker + ".diriv":  "another dir's iv",
		"gocryptfs" + testMarker2 + ".diriv": "short",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	companion := filepath.Join(dir, "gocryptfs.longname.h.name")
	f.Fuzz(func(t *testing.T, names, longContent string, mode byte, root bool) {
		n := modes[int(mode)%len(modes)]
		if err := os.WriteFile(companion, []byte(longContent), 0o644); err != nil {
			t.Fatal(err)
		}
		var ents []syscallcompat.DirEntry
		seen := make(map[string]bool)
		for _, s := range strings.Split(names, "/") {
			if s != "" && !strings.ContainsRune(s, 0) && !seen[s] {
				seen[s] = true
				ents = append(ents, syscallcompat.DirEntry{Name: s})
			}
		}
		var out []DecodedEntry
		div := iv
		if n != n0 && !n.UsesDirIV() {
			div = nil
		}
		n.DecodeDir(fd, ents, div, root, func(e DecodedEntry) { out = append(out, e) })
		checkDecoded(t, ents, out)
	})
}
