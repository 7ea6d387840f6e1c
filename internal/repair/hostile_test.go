//go:build linux

package repair_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/repair"
	"gocryptfs/internal/testutil"
)

// Attacks by whoever can write CIPHERDIR on -fsck -repair (issue 19,
// finding 3). Each runs the repair under a deadline: a hang fails the
// test instead of stalling the suite.

// repairDeadline bounds one repair run in these tests.
const repairDeadline = 2 * time.Minute

// runRepair runs Repair with o and fails the test if it does not return
// within repairDeadline.
func runRepair(t *testing.T, o repair.Options) (repair.Result, error) {
	t.Helper()
	type out struct {
		res repair.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := repair.Repair(context.Background(), o)
		ch <- out{res, err}
	}()
	select {
	case r := <-ch:
		return r.res, r.err
	case <-time.After(repairDeadline):
		t.Fatal("repair hung")
	}
	return repair.Result{}, nil
}

// outside is a victim's directory outside CIPHERDIR ("~/.ssh" with a
// private key); check fails the test if anything in it changed.
type outside struct {
	dir, sum string
}

func newOutside(t *testing.T) *outside {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory IV, so that code that reaches the directory through a
	// symlink finds it usable.
	if err := os.WriteFile(filepath.Join(ssh, nametransform.DirIVFilename), bytes.Repeat([]byte{9}, 16), 0o444); err != nil {
		t.Fatal(err)
	}
	return &outside{dir: home, sum: testutil.TreeSum(t, home)}
}

func (o *outside) check(t *testing.T) {
	t.Helper()
	if testutil.TreeSum(t, o.dir) != o.sum {
		t.Errorf("repair changed %s, outside CIPHERDIR", o.dir)
	}
}

// plantJournal writes a journal file for the run name ts.
func plantJournal(t *testing.T, cipherDir, ts string, data []byte) string {
	t.Helper()
	q := filepath.Join(cipherDir, nametransform.QuarantineDirName)
	if err := os.MkdirAll(q, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(q, ts+".journal")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// signJournal builds a journal as docs/format.md section 10 describes it:
// the JSON line, then the HMAC-SHA256 line.
func signJournal(key []byte, ts, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("gocryptfs-go repair journal v1\n" + ts + "\n" + body))
	return []byte(body + "\nhmac-sha256 " + hex.EncodeToString(m.Sum(nil)) + "\n")
}

// TestPlantedJournalRefused: a journal planted in gocryptfs.quarantine by
// someone without the master key, naming entries with "..", entries
// through a symlink to a victim's ~/.ssh, or absolute paths, is refused
// with ErrJournal before anything changes, inside or outside CIPHERDIR.
func TestPlantedJournalRefused(t *testing.T) {
	const pts = "20250101T000000Z"
	for _, tc := range []struct {
		name    string
		journal func(t *testing.T, dir, home string) []byte
	}{
		{"dotdot", func(t *testing.T, dir, home string) []byte {
			rel, _ := filepath.Rel(dir, filepath.Join(home, ".ssh"))
			return []byte(`{"op":"begin"}` + "\n" + `{"op":"diriv","dir":"","plain":"","entries":["` + rel + `/id_ed25519"]}` + "\n")
		}},
		{"symlink-in-the-middle", func(t *testing.T, dir, home string) []byte {
			if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(dir, "lnk")); err != nil {
				t.Fatal(err)
			}
			return []byte(`{"op":"begin"}` + "\n" + `{"op":"diriv","dir":"","plain":"","entries":["lnk/id_ed25519"]}` + "\n" +
				`{"op":"diriv","dir":"lnk","plain":"x","entries":["id_ed25519"]}` + "\n")
		}},
		{"new-format-unsigned", func(t *testing.T, dir, home string) []byte {
			return []byte(`{"version":1,"state":"running","diriv_replaced":[{"dir":"","plain":"","entries":["../home"]}]}` +
				"\nhmac-sha256 " + strings.Repeat("00", 32) + "\n")
		}},
		{"signed-with-another-key", func(t *testing.T, dir, home string) []byte {
			return signJournal(bytes.Repeat([]byte{1}, 32), pts,
				`{"version":1,"state":"running","diriv_replaced":[{"dir":"","plain":"","entries":["`+home+`"]}]}`)
		}},
		// Signed with the right key (a key leak, or a bug that wrote
		// them): the names are still checked.
		{"signed-dotdot-entry", func(t *testing.T, dir, home string) []byte {
			return signJournal(testJournalKey, pts, `{"version":1,"state":"running","diriv_replaced":[{"dir":"","plain":"","entries":[".."]}]}`)
		}},
		{"signed-path-entry", func(t *testing.T, dir, home string) []byte {
			return signJournal(testJournalKey, pts, `{"version":1,"state":"running","diriv_replaced":[{"dir":"","plain":"","entries":["a/../../x"]}]}`)
		}},
		{"signed-absolute-dir", func(t *testing.T, dir, home string) []byte {
			return signJournal(testJournalKey, pts, `{"version":1,"state":"running","diriv_replaced":[{"dir":"`+home+`","plain":"","entries":["x"]}]}`)
		}},
		{"signed-dotdot-plain", func(t *testing.T, dir, home string) []byte {
			return signJournal(testJournalKey, pts, `{"version":1,"state":"running","diriv_replaced":[{"dir":"","plain":"../..","entries":["x"]}]}`)
		}},
		{"signed-quarantine-dir", func(t *testing.T, dir, home string) []byte {
			return signJournal(testJournalKey, pts, `{"version":1,"state":"running","diriv_replaced":[{"dir":"gocryptfs.quarantine","plain":"","entries":["x"]}]}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t, "v1.3")
			out := newOutside(t)
			// Damage to repair, so that a repair that went on would act.
			tr.write("victim.txt", []byte("hello"))
			os.Rename(tr.abs(tr.cipherPath("victim.txt", false)), tr.abs("AAAAAAAAAAAAAAAAAAAAAA"))
			plantJournal(t, tr.dir, pts, tc.journal(t, tr.dir, out.dir))
			sum := testutil.TreeSum(t, tr.dir)
			_, err := runRepair(t, tr.opts())
			if !errors.Is(err, repair.ErrJournal) || !strings.Contains(err.Error(), pts+".journal") {
				t.Errorf("planted journal not refused: %v", err)
			}
			out.check(t)
			if testutil.TreeSum(t, tr.dir) != sum {
				t.Error("a refused journal still changed CIPHERDIR")
			}
		})
	}
}

// TestSignedJournalSymlinkNotFollowed: even a journal with a valid MAC
// whose directory is a symlink (swapped in after the run wrote it)
// reaches nothing outside CIPHERDIR.
func TestSignedJournalSymlinkNotFollowed(t *testing.T) {
	const pts = "20250101T000000Z"
	tr := newTree(t, "v1.3")
	out := newOutside(t)
	if err := os.Symlink(out.dir, tr.abs("lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out.dir, ".ssh"), tr.abs("lnk2")); err != nil {
		t.Fatal(err)
	}
	plantJournal(t, tr.dir, pts, signJournal(testJournalKey, pts,
		`{"version":1,"state":"running","diriv_replaced":[{"dir":"lnk/.ssh","plain":"a","entries":["id_ed25519"]},{"dir":"lnk2","plain":"b","entries":["id_ed25519"]}]}`))
	if _, err := runRepair(t, tr.opts()); err != nil {
		t.Fatal(err)
	}
	out.check(t)
	if _, err := os.Lstat(tr.abs(tr.cipherPath("lost+found", false))); err == nil {
		t.Error("something was salvaged through the symlinks")
	}
}

// TestEditedJournalRefused: a genuine journal that was edited, renamed to
// another run or is checked with another filesystem's key is refused.
func TestEditedJournalRefused(t *testing.T) {
	tr := newTree(t, "v1.3")
	d := tr.mkdir("d")
	tr.write("d/a.txt", []byte("alpha"))
	os.Remove(tr.abs(filepath.Join(d, nametransform.DirIVFilename)))
	if _, err := runRepair(t, tr.opts()); err != nil {
		t.Fatal(err)
	}
	jp := tr.abs(filepath.Join(nametransform.QuarantineDirName, ts+".journal"))
	orig, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(orig, []byte(`"state":"done"`)) || !bytes.Contains(orig, []byte(`"diriv_replaced"`)) {
		t.Fatalf("journal: %s", orig)
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T)
		key  []byte
	}{
		{"state", func(t *testing.T) {
			os.WriteFile(jp, bytes.Replace(orig, []byte(`"done"`), []byte(`"running"`), 1), 0o600)
		}, nil},
		{"entry", func(t *testing.T) {
			os.WriteFile(jp, bytes.Replace(orig, []byte(`"entries":["`), []byte(`"entries":["x`), 1), 0o600)
		}, nil},
		{"mac", func(t *testing.T) {
			e := bytes.Clone(orig)
			e[len(e)-2] ^= 1
			os.WriteFile(jp, e, 0o600)
		}, nil},
		{"truncated", func(t *testing.T) { os.WriteFile(jp, orig[:len(orig)-10], 0o600) }, nil},
		{"empty", func(t *testing.T) { os.WriteFile(jp, nil, 0o600) }, nil},
		{"renamed-to-another-run", func(t *testing.T) {
			os.WriteFile(jp, orig, 0o600)
			os.Rename(jp, strings.Replace(jp, ts, ts+"-7", 1))
		}, nil},
		{"other-filesystem-key", func(t *testing.T) { os.WriteFile(jp, orig, 0o600) }, bytes.Repeat([]byte{2}, 32)},
		{"fifo", func(t *testing.T) {
			os.Remove(jp)
			if err := unix.Mkfifo(jp, 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"symlink", func(t *testing.T) {
			os.Remove(jp)
			other := filepath.Join(t.TempDir(), "j")
			os.WriteFile(other, orig, 0o600)
			os.Symlink(other, jp)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit(t)
			t.Cleanup(func() {
				entries, _ := filepath.Glob(tr.abs(filepath.Join(nametransform.QuarantineDirName, "*.journal")))
				for _, e := range entries {
					os.Remove(e)
				}
				os.WriteFile(jp, orig, 0o600)
			})
			sum := testutil.TreeSum(t, tr.dir)
			o := tr.opts()
			if tc.key != nil {
				o.JournalKey = tc.key
			}
			_, err := runRepair(t, o)
			if !errors.Is(err, repair.ErrJournal) {
				t.Errorf("edited journal not refused: %v", err)
			}
			if testutil.TreeSum(t, tr.dir) != sum {
				t.Error("a refused journal still changed CIPHERDIR")
			}
		})
	}
	// The genuine one is accepted.
	if res, err := runRepair(t, tr.opts()); err != nil || res.Actions != 0 || !res.Final.Clean() {
		t.Errorf("genuine journal: %+v %v", res, err)
	}
}

// TestSparseSalvage: a corrupt sparse file of 2 GiB is salvaged as a
// sparse file; neither the copy nor the work reads or writes the hole.
func TestSparseSalvage(t *testing.T) {
	tr := newTree(t, "v1.3")
	c := tr.write("sparse.bin", pattern(4096))
	p := tr.abs(c)
	hdr := make([]byte, contentenc.HeaderLen)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	h, err := contentenc.ParseHeader(hdr)
	if err != nil {
		t.Fatal(err)
	}
	const size = 2 << 30
	last := uint64(size/4096 - 1)
	cbs := int64(tr.core.CE.CipherBS())
	tail := tr.core.CE.EncryptBlock(nil, pattern(100), last, h.ID[:])
	if _, err := f.WriteAt(tail, contentenc.HeaderLen+int64(last)*cbs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	testutil.FlipByte(t, p, contentenc.HeaderLen+100, 0x55) // block 0
	// Not tr.repair: its snapshots would read the 2 GiB.
	var evs []repair.Event
	o := tr.opts()
	o.Report = func(e repair.Event) { evs = append(evs, e) }
	start := time.Now()
	res, err := runRepair(t, o)
	if err != nil || !res.Final.Clean() {
		t.Fatalf("repair: %+v %v", res, err)
	}
	t.Logf("repair took %v", time.Since(start))
	if !hasEvent(evs, "finding", "corrupt-blocks", "") || !hasEvent(evs, "action", "", "salvaged") {
		t.Fatalf("events: %+v", evs)
	}
	var st unix.Stat_t
	sp := tr.abs(tr.cipherPath(lf("sparse.bin"), false))
	if err := unix.Stat(sp, &st); err != nil {
		t.Fatal(err)
	}
	want := contentenc.HeaderLen + int64(last)*cbs + int64(len(tail))
	if st.Size != want {
		t.Errorf("salvaged copy has %d bytes, want %d", st.Size, want)
	}
	if st.Blocks*512 > 1<<20 {
		t.Errorf("salvaged copy occupies %d bytes on disk: the hole was written", st.Blocks*512)
	}
	// The last block survived, the damaged first one reads as zeros.
	g, err := os.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	buf := make([]byte, len(tail))
	g.ReadAt(buf, contentenc.HeaderLen+int64(last)*cbs)
	if got, err := tr.core.CE.DecryptBlock(nil, buf, last, h.ID[:]); err != nil || !bytes.Equal(got, pattern(100)) {
		t.Errorf("last block: %v", err)
	}
	if r := string(tr.read(lf("sparse.bin.lost-ranges.txt"))); !strings.Contains(r, "0-4096") {
		t.Errorf("lost ranges: %s", r)
	}
}

// specials counts the FIFOs, sockets and device nodes below dir.
func specials(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	m := map[string]fs.FileMode{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice) != 0 {
			rel, _ := filepath.Rel(dir, p)
			m[rel] = d.Type()
		}
		return err
	})
	return m
}

// TestSpecialFilesNeverOpenedNorRecreated: FIFOs and device nodes under
// undecryptable names, in a salvaged subtree and planted as a journal are
// reported and moved to the quarantine, never opened (opening a FIFO
// blocks) and never recreated with mknod.
func TestSpecialFilesNeverOpenedNorRecreated(t *testing.T) {
	tr := newTree(t, "v1.3")
	fifo := "FFFFFFFFFFFFFFFFFFFFFF"
	if err := unix.Mkfifo(tr.abs(fifo), 0o644); err != nil {
		t.Fatal(err)
	}
	dev := "CCCCCCCCCCCCCCCCCCCCCC"
	haveDev := unix.Mknod(tr.abs(dev), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))) == nil
	// A directory under an undecryptable name with a FIFO inside: the
	// subtree is copied to lost+found, without the FIFO.
	sub := tr.mkdir("sub")
	tr.write("sub/file.txt", []byte("in sub"))
	inner := tr.cipherPath("sub/pipe", true)
	if err := unix.Mkfifo(tr.abs(inner), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tr.abs(sub), tr.abs("DDDDDDDDDDDDDDDDDDDDDD")); err != nil {
		t.Fatal(err)
	}
	before := specials(t, tr.dir)
	// tr.repair fails through t.Fatal, which only the test goroutine may
	// call: a hang ends the test binary instead.
	watchdog := time.AfterFunc(repairDeadline, func() { panic("repair hung on a FIFO or device node") })
	evs := tr.repair(tr.snapshot())
	watchdog.Stop()
	after := specials(t, tr.dir)
	if len(after) != len(before) {
		t.Errorf("special files before %v, after %v: some were recreated", before, after)
	}
	for rel := range before {
		q := filepath.Join(nametransform.QuarantineDirName, ts, rel)
		if after[q] != before[rel] {
			t.Errorf("%s not in the quarantine as %s (after: %v)", rel, q, after)
		}
	}
	var notedFifo, notedDev, notedInner bool
	for _, e := range evs {
		switch {
		case e.CipherPath == fifo && strings.Contains(e.Error, "named pipe"):
			notedFifo = true
		case e.CipherPath == dev && strings.Contains(e.Error, "character device"):
			notedDev = true
		case e.Action == "not-copied" && strings.HasSuffix(e.CipherPath, filepath.Base(inner)):
			notedInner = true
		}
	}
	if !notedFifo || haveDev && !notedDev || !notedInner {
		t.Errorf("special files not reported (fifo %v, device %v, in subtree %v): %+v", notedFifo, notedDev, notedInner, evs)
	}
	if got := string(tr.read(lf("DDDDDDDDDDDDDDDDDDDDDD/file.txt"))); got != "in sub" {
		t.Errorf("subtree not salvaged: %q", got)
	}
	// A FIFO planted as a journal is refused, not opened.
	j := tr.abs(filepath.Join(nametransform.QuarantineDirName, "20250101T000000Z.journal"))
	if err := unix.Mkfifo(j, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runRepair(t, tr.opts()); !errors.Is(err, repair.ErrJournal) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("FIFO journal: %v", err)
	}
}

// TestSalvageChecksFreeSpace: on a nearly full filesystem a salvage that
// would not fit is refused with ENOSPC before anything is written or
// moved (CIPHERDIR on a tmpfs of 8 MiB holding a damaged file of 5 MiB).
func TestSalvageChecksFreeSpace(t *testing.T) {
	tr := newTree(t, "v1.3")
	mnt := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=8m"); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("mounting a tmpfs needs root: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "c")
	if err := os.CopyFS(dir, os.DirFS(tr.dir)); err != nil {
		t.Fatal(err)
	}
	tr.dir = dir
	c := tr.write("big.bin", pattern(5<<20))
	testutil.FlipByte(t, tr.abs(c), contentenc.HeaderLen+int64(tr.core.CE.CipherBS())+10, 0x55)
	sum := testutil.TreeSum(t, tr.dir)
	_, err := runRepair(t, tr.opts())
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("want ENOSPC, got %v", err)
	}
	if testutil.TreeSum(t, tr.dir) != sum {
		t.Error("a salvage that did not fit changed CIPHERDIR")
	}
}

// TestPlantedSymlinksInRepairDirs: symlinks to a victim's directory
// planted where this run's quarantine, scratch directory and lost+found
// will be (the run's name is predictable: its start time) are never
// followed: the run picks another name or refuses the symlink, and
// nothing outside CIPHERDIR changes.
func TestPlantedSymlinksInRepairDirs(t *testing.T) {
	tr := newTree(t, "v1.3")
	out := newOutside(t)
	ssh := filepath.Join(out.dir, ".ssh")
	tr.write("victim.txt", []byte("hello"))
	os.Rename(tr.abs(tr.cipherPath("victim.txt", false)), tr.abs("AAAAAAAAAAAAAAAAAAAAAA"))
	q := tr.abs(nametransform.QuarantineDirName)
	if err := os.Mkdir(q, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{ts, ts + ".tmp", ts + "-2.tmp", ts + "-3"} {
		if err := os.Symlink(ssh, filepath.Join(q, n)); err != nil {
			t.Fatal(err)
		}
	}
	// lost+found of a later run (…-4) as a symlink too.
	lfc := tr.cipherPath("lost+found", true)
	os.Remove(tr.abs(lfc))
	if err := os.Symlink(ssh, tr.abs(lfc)); err != nil {
		t.Fatal(err)
	}
	_, err := runRepair(t, tr.opts())
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("lost+found as a symlink: %v", err)
	}
	out.check(t)
	// Once it is gone, a rerun finishes the interrupted run.
	os.Remove(tr.abs(lfc))
	res, err := runRepair(t, tr.opts())
	if err != nil || !res.Final.Clean() {
		t.Fatalf("%+v %v", res, err)
	}
	out.check(t)
	if got := string(tr.read("lost+found/" + ts + "-4/AAAAAAAAAAAAAAAAAAAAAA")); got != "hello" {
		t.Errorf("salvaged %q", got)
	}
}
