package repair_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/repair"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// testJournalKey stands in for the key derived from the master key.
var testJournalKey = bytes.Repeat([]byte{0x4a}, repair.JournalKeyLen)

// ts is the timestamp of every test run (Options.Now is fixed).
const ts = "20260102T030405Z"

// tree is a writable copy of a reference vector plus content planted
// with the format core.
type tree struct {
	t    *testing.T
	dir  string
	core coretest.Core
}

func newTree(t *testing.T, vector string) *tree {
	t.Helper()
	v := testutil.VectorNamed(t, vector)
	tr := &tree{t: t, dir: testutil.CopyCipherVector(t, v.Name), core: coretest.New(t, coretest.VectorOptions(t, v))}
	return tr
}

func (tr *tree) abs(rel string) string { return filepath.Join(tr.dir, rel) }

func (tr *tree) cipherPath(plain string, create bool) string {
	tr.t.Helper()
	return coretest.CipherPath(tr.t, tr.core, tr.dir, plain, create)
}

func (tr *tree) mkdir(plain string) string {
	tr.t.Helper()
	return coretest.Mkdir(tr.t, tr.core, tr.dir, plain)
}

func (tr *tree) write(plain string, data []byte) string {
	tr.t.Helper()
	return coretest.WriteFile(tr.t, tr.core, tr.dir, plain, data)
}

// read decrypts the plaintext file at plain; any error fails the test.
func (tr *tree) read(plain string) []byte {
	tr.t.Helper()
	return coretest.DecryptFile(tr.t, tr.core.CE, tr.abs(tr.cipherPath(plain, false)))
}

// snapshot records the content of every regular file and symlink.
func (tr *tree) snapshot() map[string][]byte {
	m := map[string][]byte{}
	err := filepath.WalkDir(tr.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tr.dir, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			m[rel] = b
			return err
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			m[rel] = []byte("->" + s)
			return err
		}
		return nil
	})
	if err != nil {
		tr.t.Fatal(err)
	}
	return m
}

func (tr *tree) opts() repair.Options {
	return repair.Options{
		CipherDir: tr.dir, NameTransform: tr.core.NT, ContentEnc: tr.core.CE,
		JournalKey: testJournalKey,
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

func (tr *tree) check() fsck.Result {
	tr.t.Helper()
	res, err := fsck.Check(context.Background(), fsck.Options{CipherDir: tr.dir, NameTransform: tr.core.NT, ContentEnc: tr.core.CE})
	if err != nil {
		tr.t.Fatal(err)
	}
	return res
}

// repair runs a repair and the checks every test shares: the damage was
// found; afterwards -fsck is clean; a second repair changes nothing; the
// files in keep are byte-identical to before; every file of before that
// is gone from its place is byte-identical in the quarantine. It returns
// the events.
func (tr *tree) repair(before map[string][]byte, keep ...string) []repair.Event {
	tr.t.Helper()
	if tr.check().Clean() {
		tr.t.Fatal("planted damage not found by fsck")
	}
	var evs []repair.Event
	o := tr.opts()
	o.Report = func(e repair.Event) { evs = append(evs, e) }
	res, err := repair.Repair(context.Background(), o)
	if err != nil {
		tr.t.Fatal(err)
	}
	if !res.Final.Clean() || !tr.check().Clean() {
		tr.t.Fatalf("not clean after repair: %+v %+v", res, evs)
	}
	after := tr.snapshot()
	for _, k := range keep {
		if !bytes.Equal(after[k], before[k]) || before[k] == nil {
			tr.t.Errorf("untouched file %s changed", k)
		}
	}
	for rel, b := range before {
		if a, ok := after[rel]; ok && bytes.Equal(a, b) {
			continue
		}
		q := filepath.Join(nametransform.QuarantineDirName, ts, rel)
		if !bytes.Equal(after[q], b) {
			tr.t.Errorf("%s changed or gone, and the quarantine does not hold it as it was", rel)
		}
	}
	sum := testutil.TreeSum(tr.t, tr.dir)
	res2, err := repair.Repair(context.Background(), tr.opts())
	if err != nil || res2.Actions != 0 || !res2.Final.Clean() {
		tr.t.Errorf("second repair: %+v, %v", res2, err)
	}
	if testutil.TreeSum(tr.t, tr.dir) != sum {
		tr.t.Error("second repair changed the tree")
	}
	return evs
}

// lf is the plaintext path of a salvaged item.
func lf(p string) string { return "lost+found/" + ts + "/" + p }

func hasEvent(evs []repair.Event, typ, kind, action string) bool {
	for _, e := range evs {
		if e.Type == typ && (kind == "" || e.Kind == kind) && (action == "" || e.Action == action) {
			return true
		}
	}
	return false
}

// vectorFiles are the ciphertext files of v1.3 (status.txt, the long name
// file and its name file, the diriv, the config).
func vectorFiles(tr *tree) []string {
	var out []string
	for rel := range tr.snapshot() {
		out = append(out, rel)
	}
	return out
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/4096)
	}
	return b
}

func TestCorruptBlocks(t *testing.T) {
	for _, vec := range []string{"v1.3", "v2.2-xchacha-deterministic-names", "v1.1-aessiv"} {
		t.Run(vec, func(t *testing.T) {
			tr := newTree(t, vec)
			keep := vectorFiles(tr)
			data := pattern(3*4096 + 100)
			c := tr.write("big.bin", data)
			before := tr.snapshot()
			cbs := int64(tr.core.CE.CipherBS())
			testutil.FlipByte(t, tr.abs(c), contentenc.HeaderLen+cbs+100, 0x55)  // block 1
			testutil.FlipByte(t, tr.abs(c), contentenc.HeaderLen+3*cbs+50, 0x55) // short last block 3
			before[c], _ = os.ReadFile(tr.abs(c))
			evs := tr.repair(before, keep...)
			want := bytes.Clone(data)
			clear(want[4096:8192])
			clear(want[3*4096:])
			if got := tr.read(lf("big.bin")); !bytes.Equal(got, want) {
				t.Errorf("salvaged content differs (len %d, want %d)", len(got), len(want))
			}
			ranges := string(tr.read(lf("big.bin.lost-ranges.txt")))
			if !strings.Contains(ranges, "4096-8192 (4096 bytes)") || !strings.Contains(ranges, "12288-12388 (100 bytes)") {
				t.Errorf("lost ranges file:\n%s", ranges)
			}
			if !hasEvent(evs, "finding", "corrupt-blocks", "") || !hasEvent(evs, "action", "", "salvaged") {
				t.Errorf("events: %+v", evs)
			}
		})
	}
}

func TestTruncatedMidBlock(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	data := pattern(2*4096 + 3000)
	c := tr.write("cut.bin", data)
	before := tr.snapshot()
	// Cut into block 2, leaving fewer bytes than nonce and tag.
	if err := os.Truncate(tr.abs(c), int64(contentenc.HeaderLen+2*tr.core.CE.CipherBS()+10)); err != nil {
		t.Fatal(err)
	}
	before[c], _ = os.ReadFile(tr.abs(c))
	evs := tr.repair(before, keep...)
	if got := tr.read(lf("cut.bin")); !bytes.Equal(got, data[:2*4096]) {
		t.Errorf("salvaged %d bytes, want the 8192 of the complete blocks", len(got))
	}
	if !hasEvent(evs, "finding", "truncated-block", "") {
		t.Errorf("events: %+v", evs)
	}
	if r := string(tr.read(lf("cut.bin.lost-ranges.txt"))); !strings.Contains(r, "8192-8192") {
		t.Errorf("lost ranges: %s", r)
	}
}

func TestHeaderVersion(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	data := pattern(5000)
	c := tr.write("hdr.bin", data)
	before := tr.snapshot()
	f, _ := os.OpenFile(tr.abs(c), os.O_RDWR, 0)
	f.WriteAt([]byte{0x13, 0x37}, 0)
	f.Close()
	before[c], _ = os.ReadFile(tr.abs(c))
	evs := tr.repair(before, keep...)
	if got := tr.read("hdr.bin"); !bytes.Equal(got, data) {
		t.Error("file not fully recovered in place")
	}
	if _, err := os.Lstat(tr.abs(tr.cipherPath("lost+found", false))); err == nil {
		t.Error("lost+found created for an in-place repair")
	}
	if !hasEvent(evs, "finding", "bad-header-version", "") || !hasEvent(evs, "action", "", "header-rewritten") {
		t.Errorf("events: %+v", evs)
	}
}

func TestDirIVMissing(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	d := tr.mkdir("d")
	a := tr.write("d/a.txt", []byte("alpha"))
	tr.mkdir("d/sub")
	tr.write("d/sub/b.txt", pattern(5000))
	// Damage inside the subtree that moves to lost+found: repaired there,
	// without nesting lost+found/<ts>/lost+found/<ts>/...
	c := tr.write("d/sub/c.bin", pattern(9000))
	testutil.FlipByte(t, tr.abs(c), contentenc.HeaderLen+100, 0x55)
	long := strings.Repeat("n", 200)
	la := tr.write("d/"+long, []byte("long one"))
	before := tr.snapshot()
	if err := os.Remove(tr.abs(filepath.Join(d, "gocryptfs.diriv"))); err != nil {
		t.Fatal(err)
	}
	delete(before, filepath.Join(d, "gocryptfs.diriv"))
	evs := tr.repair(before, keep...)
	if got := tr.read(lf("d/" + filepath.Base(a))); string(got) != "alpha" {
		t.Errorf("a.txt salvaged as %q", got)
	}
	subC := filepath.Base(tr.cipherPathIn(d, "sub", before))
	if got := tr.read(lf("d/" + subC + "/b.txt")); !bytes.Equal(got, pattern(5000)) {
		t.Error("subtree not salvaged intact")
	}
	want := pattern(9000)
	clear(want[:4096])
	if got := tr.read(lf("d/" + subC + "/c.bin")); !bytes.Equal(got, want) {
		t.Error("damaged file in the salvaged subtree not repaired in place")
	}
	if r := string(tr.read(lf("d/" + subC + "/c.bin.lost-ranges.txt"))); !strings.Contains(r, "0-4096") {
		t.Errorf("lost ranges: %s", r)
	}
	if _, err := os.Lstat(tr.abs(tr.cipherPath(lf("lost+found"), false))); err == nil {
		t.Error("nested lost+found")
	}
	if got := tr.read(lf("d/" + filepath.Base(la))); string(got) != "long one" {
		t.Errorf("long name salvaged as %q", got)
	}
	if !hasEvent(evs, "finding", "diriv-missing", "") || !hasEvent(evs, "action", "", "diriv-recreated") {
		t.Errorf("events: %+v", evs)
	}
	// d itself is usable again.
	tr.write("d/new.txt", []byte("new"))
	if string(tr.read("d/new.txt")) != "new" || !tr.check().Clean() {
		t.Error("d not usable after repair")
	}
}

// cipherPathIn finds the ciphertext name of the directory plain in cdir
// among the recorded files (its IV is gone from the tree).
func (tr *tree) cipherPathIn(cdir, _ string, before map[string][]byte) string {
	for rel := range before {
		if strings.HasPrefix(rel, cdir+"/") && strings.Count(rel, "/") == 2 && strings.HasSuffix(rel, "/gocryptfs.diriv") {
			return filepath.Dir(rel)
		}
	}
	tr.t.Fatal("subdir not found")
	return ""
}

func TestDirIVFromConflictCopy(t *testing.T) {
	tr := newTree(t, "v1.3")
	d := tr.mkdir("d")
	tr.write("d/a.txt", []byte("alpha"))
	before := tr.snapshot()
	keep := []string{}
	for k := range before {
		keep = append(keep, k)
	}
	if err := os.Rename(tr.abs(filepath.Join(d, "gocryptfs.diriv")), tr.abs(filepath.Join(d, "gocryptfs.sync-conflict-20260101-000000-ABCDEFG.diriv"))); err != nil {
		t.Fatal(err)
	}
	// A wrong alternative too: the one that decrypts the names wins.
	os.WriteFile(tr.abs(filepath.Join(d, "gocryptfs.backup.diriv")), bytes.Repeat([]byte{7}, 16), 0o444)
	delete(before, filepath.Join(d, "gocryptfs.diriv"))
	keep = keep[:0]
	for k := range before {
		keep = append(keep, k)
	}
	evs := tr.repair(before, keep...)
	if string(tr.read("d/a.txt")) != "alpha" {
		t.Error("a.txt not readable in place")
	}
	if _, err := os.Lstat(tr.abs(tr.cipherPath("lost+found", false))); err == nil {
		t.Error("something was moved to lost+found")
	}
	if !hasEvent(evs, "action", "", "diriv-restored") {
		t.Errorf("events: %+v", evs)
	}
}

func TestLongNameFileDamaged(t *testing.T) {
	for _, how := range []string{"missing", "empty"} {
		t.Run(how, func(t *testing.T) {
			tr := newTree(t, "v1.3")
			before := tr.snapshot()
			var hashed string
			var keep []string
			for rel := range before {
				if strings.HasPrefix(rel, nametransform.LongNamePrefix) && !strings.HasSuffix(rel, ".name") {
					hashed = rel
				} else if !strings.HasPrefix(rel, nametransform.LongNamePrefix) {
					keep = append(keep, rel)
				}
			}
			nf := tr.abs(hashed + ".name")
			if how == "missing" {
				os.Remove(nf)
				delete(before, hashed+".name")
			} else {
				os.Truncate(nf, 0)
				before[hashed+".name"] = []byte{}
			}
			evs := tr.repair(before, keep...)
			if got := string(tr.read(lf(hashed))); got != testutil.VectorContent {
				t.Errorf("salvaged %q", got)
			}
			if !hasEvent(evs, "finding", "long-name-file-damaged", "") {
				t.Errorf("events: %+v", evs)
			}
		})
	}
}

func TestOrphanLongNameFile(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	orphan := nametransform.LongNamePrefix + strings.Repeat("A", 43) + ".name"
	os.WriteFile(tr.abs(orphan), []byte("whatever"), 0o444)
	before := tr.snapshot()
	delete(before, orphan)
	evs := tr.repair(before, keep...)
	if q, err := os.ReadFile(tr.abs(filepath.Join(nametransform.QuarantineDirName, ts, orphan))); err != nil || string(q) != "whatever" {
		t.Errorf("orphan not quarantined: %v", err)
	}
	if !hasEvent(evs, "finding", "orphan-long-name-file", "") {
		t.Errorf("events: %+v", evs)
	}
}

func TestUndecryptableName(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	c := tr.write("victim.txt", []byte("saved by repair"))
	bad := "AAAAAAAAAAAAAAAAAAAAAA"
	os.Rename(tr.abs(c), tr.abs(bad))
	os.WriteFile(tr.abs("BBBBBBBBBBBBBBBBBBBBBB"), []byte("no header at all, just junk bytes"), 0o644)
	before := tr.snapshot()
	evs := tr.repair(before, keep...)
	if got := string(tr.read(lf(bad))); got != "saved by repair" {
		t.Errorf("salvaged %q", got)
	}
	if _, err := os.Lstat(tr.abs(tr.cipherPath(lf("BBBBBBBBBBBBBBBBBBBBBB"), false))); err == nil {
		t.Error("a file without valid header was salvaged")
	}
	if !hasEvent(evs, "action", "", "quarantined") || !hasEvent(evs, "action", "", "salvaged") {
		t.Errorf("events: %+v", evs)
	}
}

func TestBadSymlinkTarget(t *testing.T) {
	tr := newTree(t, "v1.3")
	before := tr.snapshot()
	c := tr.cipherPath("rel", false)
	os.Remove(tr.abs(c))
	os.Symlink("bm90IGEgdmFsaWQgdGFyZ2V0IGF0IGFsbA", tr.abs(c))
	before[c] = []byte("->bm90IGEgdmFsaWQgdGFyZ2V0IGF0IGFsbA")
	var keep []string
	for k := range before {
		if k != c {
			keep = append(keep, k)
		}
	}
	evs := tr.repair(before, keep...)
	if !hasEvent(evs, "finding", "undecryptable-symlink", "") || !hasEvent(evs, "action", "", "quarantined") {
		t.Errorf("events: %+v", evs)
	}
}

func TestBadXattrs(t *testing.T) {
	tr := newTree(t, "v1.3")
	keep := vectorFiles(tr)
	p := tr.abs(tr.cipherPath("status.txt", false))
	good, _ := tr.core.NT.EncryptXattrName("user.good")
	bad, _ := tr.core.NT.EncryptXattrName("user.bad")
	if err := unix.Setxattr(p, good, tr.core.NT.EncryptXattrValue([]byte("fine")), 0); err != nil {
		t.Skipf("no user xattrs here: %v", err)
	}
	badVal := []byte("not an encrypted value at all")
	unix.Setxattr(p, bad, badVal, 0)
	unix.Setxattr(p, "user.gocryptfs.notbase64!", []byte("x"), 0)
	evs := tr.repair(tr.snapshot(), keep...)
	q, err := os.ReadFile(tr.abs(filepath.Join(nametransform.QuarantineDirName, ts, filepath.Base(p)+".xattr."+bad)))
	if err != nil || !bytes.Equal(q, badVal) {
		t.Errorf("bad xattr value not quarantined: %q %v", q, err)
	}
	v := make([]byte, 200)
	n, err := unix.Getxattr(p, good, v)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := tr.core.NT.DecryptXattrValue(v[:n]); err != nil || string(plain) != "fine" {
		t.Errorf("good xattr: %q %v", plain, err)
	}
	if !hasEvent(evs, "finding", "undecryptable-xattr-value", "") || !hasEvent(evs, "finding", "undecryptable-xattr-name", "") ||
		!hasEvent(evs, "action", "", "xattr-removed") {
		t.Errorf("events: %+v", evs)
	}
}

// TestHeaderLost: without a file ID nothing decrypts; the file is only
// quarantined.
func TestHeaderLost(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		damage     func(p string)
	}{
		{"truncated to 10 bytes", "truncated-header", func(p string) { os.Truncate(p, 10) }},
		{"header zeroed", "bad-header", func(p string) {
			f, _ := os.OpenFile(p, os.O_RDWR, 0)
			f.WriteAt(make([]byte, contentenc.HeaderLen), 0)
			f.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t, "v1.3")
			keep := vectorFiles(tr)
			c := tr.write("gone.bin", pattern(6000))
			before := tr.snapshot()
			tc.damage(tr.abs(c))
			before[c], _ = os.ReadFile(tr.abs(c))
			evs := tr.repair(before, keep...)
			if _, err := os.Lstat(tr.abs(tr.cipherPath("lost+found", false))); err == nil {
				t.Error("lost+found created for a file with nothing to save")
			}
			if !hasEvent(evs, "finding", tc.kind, "") || !hasEvent(evs, "action", "", "quarantined") {
				t.Errorf("events: %+v", evs)
			}
		})
	}
}

// TestRootDirIVMissing: the root's entries go to lost+found, which is
// created under the root's new IV; the config stays.
func TestRootDirIVMissing(t *testing.T) {
	tr := newTree(t, "v1.3")
	before := tr.snapshot()
	status := tr.cipherPath("status.txt", false)
	os.Remove(tr.abs("gocryptfs.diriv"))
	delete(before, "gocryptfs.diriv")
	tr.repair(before, "gocryptfs.conf")
	if got := string(tr.read(lf(status))); got != testutil.VectorContent {
		t.Errorf("status.txt salvaged as %q", got)
	}
	view := coretest.PlainTree(t, tr.core, tr.dir)
	if len(view) != 6 { // lost+found, <ts>, status.txt, the long name file, rel, abs
		t.Errorf("view: %v", view)
	}
}

// TestStaleJournalScratch: a run killed while it wrote its first journal
// leaves the journal's scratch file and nothing else (no change is made
// before the journal is in place). The next run removes it, so that a run
// after a crash ends with the same tree as an uninterrupted one
// (tests/tools TestRepairCrash caught it at a random kill).
func TestStaleJournalScratch(t *testing.T) {
	tr := newTree(t, "v1.3")
	c := tr.write("big.bin", pattern(3*4096))
	before := tr.snapshot()
	testutil.FlipByte(t, tr.abs(c), contentenc.HeaderLen+100, 0x55)
	before[c], _ = os.ReadFile(tr.abs(c))
	q := tr.abs(nametransform.QuarantineDirName)
	if err := os.Mkdir(q, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(q, "20260101T000000Z.journal.tmp")
	if err := os.WriteFile(stale, []byte("half a journal"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr.repair(before)
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale journal scratch file still there: %v", err)
	}
}
