package fsck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/conflictname"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
)

// TestSyncConflicts: a directory created on two machines (a conflict copy
// of its gocryptfs.diriv and names under both IVs, one name on both) and
// conflict copies of a short and a long name are warnings, not errors;
// their contents are still checked.
func TestSyncConflicts(t *testing.T) {
	m := conflictname.Marker{Tool: conflictname.Syncthing, Text: ".sync-conflict-20261202-120000-ABCDEFG"}
	f := newFS(t, variants[0])
	f.populate()
	// Machine B's copy of dir1: built as "dirB", then moved into dir1.
	f.mkdir("dirB")
	f.file("dirB/sub", []byte("same name as A's dir"), 0)
	f.file("dirB/onlyB", []byte("b"), 0)
	f.file("dirB/"+strings.Repeat("M", 200), []byte("long b"), 0)
	cB, cA := f.path(f.encs["dirB"]), f.path(f.encs["dir1"])
	ents, err := os.ReadDir(cB)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		to := e.Name()
		if to == nametransform.DirIVFilename {
			to = m.Apply(to)
		}
		if err := os.Rename(filepath.Join(cB, e.Name()), filepath.Join(cA, to)); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(cB)
	// Conflict copies of a short and a long name (their contents: copies
	// of healthy files).
	for _, p := range []string{"one", "dir1/" + strings.Repeat("L", 200)} {
		c := f.path(f.encs[p])
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(filepath.Dir(c), m.Apply(filepath.Base(c)))
		if err := os.WriteFile(copyPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Syncthing's folder marker and a temporary file are not entries.
	os.Mkdir(f.path(".stfolder"), 0o755)
	os.WriteFile(f.path(".syncthing.x.tmp"), nil, 0o644)
	res, probs := f.check()
	if res.Corrupt != 0 || res.Warnings != 5 {
		var lines []string
		for _, p := range probs {
			lines = append(lines, p.String())
		}
		t.Fatalf("got %+v, want 0 corrupt and 5 warnings:\n%s", res, strings.Join(lines, "\n"))
	}
	shown := map[string]bool{}
	for _, p := range probs {
		if p.Kind != fsck.SyncConflict || !strings.HasPrefix(p.String(), "fsck: warning: ") {
			t.Errorf("unexpected %v", p)
		}
		shown[p.Name] = true
	}
	for _, n := range []string{m.Apply("sub"), m.Apply("onlyB"), m.Apply(strings.Repeat("M", 200)), m.Apply("one"), m.Apply(strings.Repeat("L", 200))} {
		if !shown[n] {
			t.Errorf("no warning showing %q: %v", n, probs)
		}
	}
	// A damaged conflict copy is still an error.
	c := filepath.Join(f.path(""), m.Apply(filepath.Base(f.encs["one"])))
	if err := os.WriteFile(c, []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _ := f.check(); res.Corrupt != 1 {
		t.Errorf("damaged copy: got %+v, want one corrupt file", res)
	}
}

// TestPlantedDirIVCopy: a copy of another directory's gocryptfs.diriv
// planted as a conflict copy, with an entry of that directory next to it,
// is flagged: the warning names the IV copy and the entry is shown only
// decorated with its marker, never under its own name.
func TestPlantedDirIVCopy(t *testing.T) {
	m := conflictname.Marker{Tool: conflictname.Syncthing, Text: ".sync-conflict-20261202-120000-ABCDEFG"}
	f := newFS(t, variants[0])
	f.mkdir("a")
	f.mkdir("b")
	f.file("a/secret", []byte("a's"), 0)
	f.file("b/own", []byte("b's"), 0)
	ca, cb := f.path(f.encs["a"]), f.path(f.encs["b"])
	iv, err := os.ReadFile(filepath.Join(ca, nametransform.DirIVFilename))
	if err != nil {
		t.Fatal(err)
	}
	ivCopy := m.Apply(nametransform.DirIVFilename)
	if err := os.WriteFile(filepath.Join(cb, ivCopy), iv, 0o400); err != nil {
		t.Fatal(err)
	}
	cSecret := filepath.Base(f.encs["a/secret"])
	if err := os.Link(filepath.Join(ca, cSecret), filepath.Join(cb, cSecret)); err != nil {
		t.Fatal(err)
	}
	res, probs := f.check()
	if res.Corrupt != 0 || res.Warnings != 1 || len(probs) != 1 {
		t.Fatalf("got %+v %v, want one warning", res, probs)
	}
	p := probs[0]
	if p.Kind != fsck.SyncConflict || p.Name != m.Apply("secret") || p.AltIV != ivCopy ||
		!strings.Contains(p.String(), ivCopy) || !strings.HasPrefix(p.String(), "fsck: warning: ") {
		t.Errorf("got %+v (%s), want a warning showing %q under the IV copy %q", p, p, m.Apply("secret"), ivCopy)
	}
}
