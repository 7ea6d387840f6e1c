package fusefrontend

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/conflictname"
	"gocryptfs/internal/nametransform"
)

// One marker of every tool, as the tools would add it.
var testMarkers = []conflictname.Marker{
	{Tool: conflictname.Syncthing, Text: ".sync-conflict-20261202-120000-ABCDEFG"},
	{Tool: conflictname.Nextcloud, Text: " (conflicted copy 2026-12-02 120000)"},
	{Tool: conflictname.Dropbox, Text: " (Bob's conflicted copy 2026-12-02)"},
	{Tool: conflictname.OneDrive, Text: "-LAPTOP"},
	{Tool: conflictname.Numbered, Text: " (1)"},
}

// cipherNameOf returns the backing name of the plaintext entry dir/name.
func (tf *testFS) cipherNameOf(t *testing.T, dir, name string) string {
	t.Helper()
	c, err := tf.rn.EncryptPath(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(c)
}

// plainEntries lists a directory of the mount, sorted.
func (tf *testFS) plainEntries(t *testing.T, rel string) []string {
	t.Helper()
	return dirNames(t, tf.path(rel))
}

// makeConflictCopy simulates a sync tool: the backing file of the
// plaintext file src (other contents) is renamed to the conflict copy name
// of the backing name of dir/orig. It returns the copy's backing name.
func (tf *testFS) makeConflictCopy(t *testing.T, dir, orig, src string, m conflictname.Marker) string {
	t.Helper()
	cOrig := tf.cipherNameOf(t, dir, orig)
	cSrc := tf.cipherNameOf(t, dir, src)
	cCopy := m.Apply(cOrig)
	cdir := filepath.Join(tf.cipher, tf.cipherDir(t, dir))
	if err := os.Rename(filepath.Join(cdir, cSrc), filepath.Join(cdir, cCopy)); err != nil {
		t.Fatal(err)
	}
	if nametransform.IsLongContent(cSrc) {
		os.Remove(filepath.Join(cdir, nametransform.LongNameFilename(cSrc)))
	}
	return cCopy
}

// cipherDir returns the backing path of a plaintext directory, relative
// to CIPHERDIR.
func (tf *testFS) cipherDir(t *testing.T, dir string) string {
	t.Helper()
	c, err := tf.rn.EncryptPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConflictCopies: a conflict copy of an encrypted name (short and
// long) made by each tool is listed under the decorated plaintext name and
// can be read, written, renamed (to a properly encrypted name) and
// deleted (only its own backing file).
func TestConflictCopies(t *testing.T) {
	tf := mountFS(t, testConfig{})
	longName := strings.Repeat("L", 190) + ".txt"
	for _, m := range testMarkers {
		for _, orig := range []string{"report.txt", ".hidden", longName} {
			t.Run(m.Tool.String()+"/"+orig[:min(len(orig), 10)], func(t *testing.T) {
				dir := "d-" + m.Tool.String() + "-" + orig[:2]
				if err := os.Mkdir(tf.path(dir), 0o755); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, tf.path(dir+"/"+orig), []byte("original"))
				mustWrite(t, tf.path(dir+"/tmp"), []byte("their version"))
				cCopy := tf.makeConflictCopy(t, dir, orig, "tmp", m)
				shown := m.Apply(orig)
				want := []string{orig, shown}
				slices.Sort(want)
				cdir := tf.cipherDir(t, dir)
				if got := tf.plainEntries(t, dir); !slices.Equal(got, want) {
					t.Fatalf("listing %q, want %q (backing %q)", got, want, tf.cipherEntries(t, cdir))
				}
				if got := mustRead(t, tf.path(dir+"/"+shown)); string(got) != "their version" {
					t.Fatalf("copy reads %q", got)
				}
				// Write through the shown name: the same backing file.
				mustWrite(t, tf.path(dir+"/"+shown), []byte("edited copy"))
				if _, err := os.Stat(filepath.Join(tf.cipher, cdir, cCopy)); err != nil {
					t.Fatalf("backing copy gone after write: %v", err)
				}
				if got := mustRead(t, tf.path(dir+"/"+orig)); string(got) != "original" {
					t.Fatalf("original reads %q", got)
				}
				// chmod and utimes by path through the shown name act
				// on the copy (SETATTR tries the regular name first).
				if err := os.Chmod(tf.path(dir+"/"+shown), 0o640); err != nil {
					t.Fatal(err)
				}
				mt := time.Unix(1700000000, 0)
				if err := os.Chtimes(tf.path(dir+"/"+shown), mt, mt); err != nil {
					t.Fatal(err)
				}
				if st, err := os.Stat(filepath.Join(tf.cipher, cdir, cCopy)); err != nil || st.Mode().Perm() != 0o640 || !st.ModTime().Equal(mt) {
					t.Fatalf("backing copy after chmod/utimes: %v %v", st, err)
				}
				if st, err := os.Stat(tf.path(dir + "/" + orig)); err != nil || st.Mode().Perm() == 0o640 || st.ModTime().Equal(mt) {
					t.Fatalf("original changed by the copy's chmod/utimes: %v %v", st, err)
				}
				// Deleting the original keeps the copy readable (a long
				// name's companion file is shared).
				if err := os.Remove(tf.path(dir + "/" + orig)); err != nil {
					t.Fatal(err)
				}
				if got := mustRead(t, tf.path(dir+"/"+shown)); string(got) != "edited copy" {
					t.Fatalf("copy reads %q after removing the original", got)
				}
				// Rename gives a regular encrypted name.
				if err := os.Rename(tf.path(dir+"/"+shown), tf.path(dir+"/merged")); err != nil {
					t.Fatal(err)
				}
				if got := tf.plainEntries(t, dir); !slices.Equal(got, []string{"merged"}) {
					t.Fatalf("after rename: %q", got)
				}
				backing := tf.cipherEntries(t, cdir)
				want = []string{nametransform.DirIVFilename, tf.cipherNameOf(t, dir, "merged")}
				if c := want[1]; nametransform.IsLongContent(c) {
					want = append(want, nametransform.LongNameFilename(c))
				}
				if !slices.Equal(sorted(backing), sorted(want)) {
					t.Fatalf("backing after rename %q, want %q", backing, want)
				}
			})
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestConflictCopyDelete: deleting a shown copy removes exactly its
// backing file; the original (and a long name's companion) stay, and the
// companion goes with the last of them.
func TestConflictCopyDelete(t *testing.T) {
	tf := mountFS(t, testConfig{})
	m := testMarkers[0]
	for _, orig := range []string{"a.txt", strings.Repeat("x", 200)} {
		mustWrite(t, tf.path(orig), []byte("mine"))
		mustWrite(t, tf.path("tmp"), []byte("theirs"))
		tf.makeConflictCopy(t, "", orig, "tmp", m)
		before := tf.cipherEntries(t, "")
		if err := os.Remove(tf.path(m.Apply(orig))); err != nil {
			t.Fatal(err)
		}
		after := tf.cipherEntries(t, "")
		if len(after) != len(before)-1 {
			t.Fatalf("delete removed %d backing files: %q -> %q", len(before)-len(after), before, after)
		}
		if got := mustRead(t, tf.path(orig)); string(got) != "mine" {
			t.Fatalf("original reads %q", got)
		}
		if err := os.Remove(tf.path(orig)); err != nil {
			t.Fatal(err)
		}
		if got := tf.cipherEntries(t, ""); !slices.Equal(got, []string{nametransform.DirIVFilename}) {
			t.Fatalf("left over: %q", got)
		}
	}
	// The other order for a long name: original first, then the copy.
	orig := strings.Repeat("y", 200)
	mustWrite(t, tf.path(orig), []byte("mine"))
	mustWrite(t, tf.path("tmp"), []byte("theirs"))
	tf.makeConflictCopy(t, "", orig, "tmp", m)
	if err := os.Remove(tf.path(orig)); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tf.path(m.Apply(orig))); string(got) != "theirs" {
		t.Fatalf("copy reads %q", got)
	}
	if err := os.Remove(tf.path(m.Apply(orig))); err != nil {
		t.Fatal(err)
	}
	if got := tf.cipherEntries(t, ""); !slices.Equal(got, []string{nametransform.DirIVFilename}) {
		t.Fatalf("left over: %q", got)
	}
}

// TestConflictLookalikeNames: plaintext names that look like conflict
// copies are ordinary names: regular backing names, shown once, side by
// side with the behaviour of a plain directory.
func TestConflictLookalikeNames(t *testing.T) {
	tf := mountFS(t, testConfig{})
	plain := t.TempDir()
	var names []string
	for _, m := range testMarkers {
		names = append(names, m.Apply("report.txt"))
	}
	names = append(names, "report.txt")
	for _, root := range []string{plain, tf.mnt} {
		for i, n := range names {
			mustWrite(t, filepath.Join(root, n), []byte{byte(i)})
		}
	}
	for _, n := range names {
		a, b := mustRead(t, filepath.Join(plain, n)), mustRead(t, tf.path(n))
		if !bytes.Equal(a, b) {
			t.Errorf("%q: plain %v, mount %v", n, a, b)
		}
		c := tf.cipherNameOf(t, "", n)
		if got, err := tf.rn.nt.DecryptName(c, readIV(t, tf.cipher)); err != nil || got != n {
			t.Errorf("%q: backing name %q decrypts to %q, %v", n, c, got, err)
		}
	}
	pl, _ := os.ReadDir(plain)
	var want []string
	for _, e := range pl {
		want = append(want, e.Name())
	}
	if got := tf.plainEntries(t, ""); !slices.Equal(got, want) {
		t.Errorf("mount lists %q, plain dir %q", got, want)
	}
	// A lookalike name that does not exist is not found.
	if _, err := os.Stat(tf.path("other.sync-conflict-20261202-120000-ABCDEFG.txt")); !os.IsNotExist(err) {
		t.Errorf("stat of a missing lookalike: %v", err)
	}
}

func readIV(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, nametransform.DirIVFilename))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTwoDirIVs simulates one directory created on two machines before
// they synced: the second machine's IV file became a conflict copy and its
// names (a file, a name also present on the first machine, a directory
// with a file) sit next to the first machine's. All are shown, the second
// machine's decorated with the IV copy's marker, and they can be read,
// written, renamed (getting a regular name under the main IV) and deleted.
func TestTwoDirIVs(t *testing.T) {
	for _, m := range testMarkers {
		t.Run(m.Tool.String(), func(t *testing.T) {
			tf := mountFS(t, testConfig{})
			for _, d := range []string{"d", "d2", "d2/sub"} {
				if err := os.Mkdir(tf.path(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, tf.path("d/f"), []byte("f from A"))
			mustWrite(t, tf.path("d/g.txt"), []byte("g from A"))
			mustWrite(t, tf.path("d2/f"), []byte("f from B"))
			mustWrite(t, tf.path("d2/h.txt"), []byte("h from B"))
			mustWrite(t, tf.path("d2/sub/s"), []byte("s from B"))
			longB := strings.Repeat("B", 180)
			mustWrite(t, tf.path("d2/"+longB), []byte("long from B"))
			// "Sync": move d2's backing entries into d.
			cd := filepath.Join(tf.cipher, tf.cipherNameOf(t, "", "d"))
			cd2 := filepath.Join(tf.cipher, tf.cipherNameOf(t, "", "d2"))
			for _, n := range tf.cipherEntries(t, tf.cipherNameOf(t, "", "d2")) {
				to := n
				if n == nametransform.DirIVFilename {
					to = m.Apply(n)
				}
				if err := os.Rename(filepath.Join(cd2, n), filepath.Join(cd, to)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Remove(cd2); err != nil {
				t.Fatal(err)
			}
			// B's names are all shown decorated with the IV copy's marker
			// (a planted IV copy must not make foreign entries pass for
			// this directory's own).
			fB, hB, subB, longBShown := m.Apply("f"), m.Apply("h.txt"), m.Apply("sub"), m.Apply(longB)
			want := sorted([]string{"f", fB, "g.txt", hB, subB, longBShown})
			if got := tf.plainEntries(t, "d"); !slices.Equal(got, want) {
				t.Fatalf("listing %q, want %q", got, want)
			}
			for p, c := range map[string]string{"d/f": "f from A", "d/" + fB: "f from B", "d/" + hB: "h from B", "d/" + subB + "/s": "s from B", "d/" + longBShown: "long from B"} {
				if got := mustRead(t, tf.path(p)); string(got) != c {
					t.Errorf("%s reads %q, want %q", p, got, c)
				}
			}
			for _, p := range []string{"d/h.txt", "d/sub", "d/" + longB} {
				if _, err := os.Lstat(tf.path(p)); !os.IsNotExist(err) {
					t.Errorf("%s found undecorated: %v", p, err)
				}
			}
			mustWrite(t, tf.path("d/"+hB), []byte("h edited"))
			mustWrite(t, tf.path("d/"+subB+"/s2"), []byte("new in B's dir"))
			if got := mustRead(t, tf.path("d/"+hB)); string(got) != "h edited" {
				t.Errorf("%s reads %q", hB, got)
			}
			if err := os.Rename(tf.path("d/"+fB), tf.path("d/f-from-B")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tf.path("d/"+longBShown), tf.path("d/long")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(tf.path("d/" + hB)); err != nil {
				t.Fatal(err)
			}
			want = sorted([]string{"f", "f-from-B", "g.txt", "long", subB})
			if got := tf.plainEntries(t, "d"); !slices.Equal(got, want) {
				t.Fatalf("listing after changes %q, want %q", got, want)
			}
			if got := mustRead(t, tf.path("d/f-from-B")); string(got) != "f from B" {
				t.Errorf("renamed copy reads %q", got)
			}
			if got := mustRead(t, tf.path("d/"+subB+"/s2")); string(got) != "new in B's dir" {
				t.Errorf("sub/s2 reads %q", got)
			}
			// Renamed entries got names under the main IV; what is left
			// under B's IV is only the directory "sub".
			iv := readIV(t, cd)
			var other []string
			for _, n := range tf.cipherEntries(t, tf.cipherNameOf(t, "", "d")) {
				if strings.HasPrefix(n, "gocryptfs") {
					continue
				}
				// A name under B's IV passes the padding check under the
				// main IV about once in 256 tries, decrypting to garbage:
				// "under the main IV" means one of the names put there.
				if p, err := tf.rn.nt.DecryptName(n, iv); err != nil || !slices.Contains([]string{"f", "f-from-B", "g.txt", "long"}, p) {
					other = append(other, n)
				}
			}
			if len(other) != 1 {
				t.Errorf("backing names not under the main IV: %q, want only sub's", other)
			}
			// Emptied, the directory can be removed, IV copy and all.
			for _, p := range []string{"d/" + subB + "/s", "d/" + subB + "/s2", "d/" + subB, "d/f", "d/f-from-B", "d/g.txt", "d/long"} {
				if err := os.Remove(tf.path(p)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Remove(tf.path("d")); err != nil {
				t.Fatalf("rmdir of the emptied two-IV directory: %v", err)
			}
			if got := tf.cipherEntries(t, ""); !slices.Equal(got, []string{nametransform.DirIVFilename}) {
				t.Errorf("left over: %q", got)
			}
		})
	}
}

// TestSyncToolFilesHidden: sync tools' own files in CIPHERDIR (Syncthing's
// folder marker, a temporary file) are hidden without a warning.
func TestSyncToolFilesHidden(t *testing.T) {
	tf := mountFS(t, testConfig{})
	mustWrite(t, tf.path("a"), []byte("x"))
	if err := os.Mkdir(filepath.Join(tf.cipher, ".stfolder"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(tf.cipher, ".syncthing.abc.tmp"), nil)
	mustWrite(t, filepath.Join(tf.cipher, ".unknown"), nil)
	if got := tf.plainEntries(t, ""); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("listing %q", got)
	}
	if n := tf.logs.CountLines("undecryptable name hidden"); n != 1 {
		t.Errorf("%d warnings, want 1 (for .unknown only):\n%s", n, tf.logs.String())
	}
}

// TestConflictCopyRmdir: an empty directory shown under a conflict-copy
// name is removed by that name (Rmdir tries the regular name first), and
// the original stays.
func TestConflictCopyRmdir(t *testing.T) {
	tf := mountFS(t, testConfig{})
	for _, d := range []string{"d", "d/orig", "d/tmp"} {
		if err := os.Mkdir(tf.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := testMarkers[0]
	cCopy := tf.makeConflictCopy(t, "d", "orig", "tmp", m)
	shown := m.Apply("orig")
	if err := os.Remove(tf.path("d/" + shown)); err != nil {
		t.Fatalf("rmdir of the shown copy: %v", err)
	}
	cdir := filepath.Join(tf.cipher, tf.cipherDir(t, "d"))
	if _, err := os.Stat(filepath.Join(cdir, cCopy)); !os.IsNotExist(err) {
		t.Fatalf("backing copy still there: %v", err)
	}
	if got := tf.plainEntries(t, "d"); !slices.Equal(got, []string{"orig"}) {
		t.Fatalf("listing after rmdir: %q", got)
	}
}

// TestPlantedDirIVCopy: whoever holds the storage copies directory a's
// gocryptfs.diriv into directory b as a sync conflict copy and a's
// backing entry "secret" next to it. The entry must not appear in b under
// its own name (that would let the storage move files between
// directories unnoticed); it is shown only decorated with the IV copy's
// marker, and its undecorated name is not found. A file created under
// that name gets a regular name under b's own IV.
func TestPlantedDirIVCopy(t *testing.T) {
	tf := mountFS(t, testConfig{})
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(tf.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, tf.path("a/secret"), []byte("a's file"))
	mustWrite(t, tf.path("b/own"), []byte("b's file"))
	ca := filepath.Join(tf.cipher, tf.cipherDir(t, "a"))
	cb := filepath.Join(tf.cipher, tf.cipherDir(t, "b"))
	m := testMarkers[0]
	iv, err := os.ReadFile(filepath.Join(ca, nametransform.DirIVFilename))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(cb, m.Apply(nametransform.DirIVFilename)), iv)
	cSecret := tf.cipherNameOf(t, "a", "secret")
	if err := os.Link(filepath.Join(ca, cSecret), filepath.Join(cb, cSecret)); err != nil {
		t.Fatal(err)
	}
	want := sorted([]string{"own", m.Apply("secret")})
	if got := tf.plainEntries(t, "b"); !slices.Equal(got, want) {
		t.Fatalf("b lists %q, want %q", got, want)
	}
	if _, err := os.Stat(tf.path("b/secret")); !os.IsNotExist(err) {
		t.Fatalf("planted entry found under its undecorated name: %v", err)
	}
	if got := mustRead(t, tf.path("b/"+m.Apply("secret"))); string(got) != "a's file" {
		t.Fatalf("decorated entry reads %q", got)
	}
	mustWrite(t, tf.path("b/secret"), []byte("new in b"))
	if got := mustRead(t, tf.path("a/secret")); string(got) != "a's file" {
		t.Fatalf("a/secret changed to %q by creating b/secret", got)
	}
	if _, err := os.Stat(filepath.Join(cb, tf.cipherNameOf(t, "b", "secret"))); err != nil {
		t.Fatalf("b/secret not created under b's own IV: %v", err)
	}
}
