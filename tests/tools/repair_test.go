package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// repairVector is the reference vector the faults are planted in.
const repairVector = "v1.3"

// faultyTree copies the reference vector and plants one fault of every
// kind -repair handles, next to healthy content. It returns the
// CIPHERDIR and the core to decrypt it with.
func faultyTree(t *testing.T) (string, coretest.Core) {
	t.Helper()
	v := testutil.VectorNamed(t, repairVector)
	dir := testutil.CopyCipherVector(t, v.Name)
	c := coretest.New(t, coretest.VectorOptions(t, v))
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	data := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*13 + i/4096)
		}
		return b
	}
	cbs := int64(c.CE.CipherBS())
	// Healthy content that must come through untouched.
	coretest.Mkdir(t, c, dir, "ok")
	coretest.WriteFile(t, c, dir, "ok/keep.txt", []byte("keep me"))
	coretest.Symlink(t, c, dir, "ok/link", "keep.txt")
	// A bad block in the middle and in the short last block.
	big := coretest.WriteFile(t, c, dir, "big.bin", data(3*4096+100))
	testutil.FlipByte(t, abs(big), contentenc.HeaderLen+cbs+10, 0x21)
	testutil.FlipByte(t, abs(big), contentenc.HeaderLen+3*cbs+20, 0x21)
	// Cut in the middle of block 2.
	cut := coretest.WriteFile(t, c, dir, "ok/cut.bin", data(2*4096+3000))
	must(os.Truncate(abs(cut), contentenc.HeaderLen+2*cbs+7))
	// Damaged header version.
	hdr := coretest.WriteFile(t, c, dir, "hdr.bin", data(5000))
	f, err := os.OpenFile(abs(hdr), os.O_RDWR, 0)
	must(err)
	_, err = f.WriteAt([]byte{0xde, 0xad}, 0)
	must(err)
	f.Close()
	// A directory that lost its IV, with a file, a subtree and a long name.
	d := coretest.Mkdir(t, c, dir, "d")
	coretest.WriteFile(t, c, dir, "d/a.txt", []byte("alpha"))
	coretest.Mkdir(t, c, dir, "d/sub")
	coretest.WriteFile(t, c, dir, "d/sub/b.txt", data(6000))
	testutil.FlipByte(t, abs(coretest.WriteFile(t, c, dir, "d/sub/c.bin", data(9000))), contentenc.HeaderLen+100, 0x21)
	coretest.WriteFile(t, c, dir, "d/"+strings.Repeat("n", 210), []byte("long"))
	must(os.Remove(abs(filepath.Join(d, nametransform.DirIVFilename))))
	// A directory whose IV survives as a sync conflict copy.
	e := coretest.Mkdir(t, c, dir, "e")
	coretest.WriteFile(t, c, dir, "e/x.txt", []byte("x"))
	must(os.Rename(abs(filepath.Join(e, nametransform.DirIVFilename)), abs(filepath.Join(e, "gocryptfs.sync-conflict-20260101-120000-ABCDEFG.diriv"))))
	// A directory whose IV lost one bit: recovered, nothing moves.
	fl := coretest.Mkdir(t, c, dir, "flip")
	coretest.WriteFile(t, c, dir, "flip/y.txt", []byte("y"))
	coretest.WriteFile(t, c, dir, "flip/"+strings.Repeat("f", 190), []byte("long y"))
	testutil.FlipByte(t, abs(filepath.Join(fl, nametransform.DirIVFilename)), 5, 0x08)
	// The vector's long name file loses its .name file.
	ents, err := os.ReadDir(dir)
	must(err)
	for _, en := range ents {
		if nametransform.IsLongNameFile(en.Name()) {
			must(os.Remove(abs(en.Name())))
		}
	}
	// An orphan .name file, an undecryptable name with good content, one
	// with junk, a symlink whose target does not decrypt.
	must(os.WriteFile(abs(nametransform.LongNamePrefix+strings.Repeat("Q", 43)+".name"), []byte("orphan"), 0o444))
	good := coretest.WriteFile(t, c, dir, "renamed.txt", []byte("content under a bad name"))
	must(os.Rename(abs(good), abs("AAAAAAAAAAAAAAAAAAAAAA")))
	must(os.WriteFile(abs("BBBBBBBBBBBBBBBBBBBBBB"), []byte("junk junk junk junk junk"), 0o644))
	must(os.Symlink("bm90IGEgdGFyZ2V0", abs(coretest.CipherPath(t, c, dir, "badlink", false))))
	return dir, c
}

// masterkeyArgs unlock the vector without scrypt.
func masterkeyArgs(t *testing.T) []string {
	v := testutil.VectorNamed(t, repairVector)
	return append([]string{"-masterkey=" + v.MasterKey}, v.Flags()...)
}

func runRepair(t *testing.T, dir string, env []string, extra ...string) testutil.Result {
	t.Helper()
	return runRepairWith(t, gocryptfsBin, dir, env, extra...)
}

func runRepairWith(t *testing.T, bin, dir string, env []string, extra ...string) testutil.Result {
	t.Helper()
	args := append(append([]string{"-fsck", "-repair", "-q"}, masterkeyArgs(t)...), extra...)
	return testutil.Run(t, testutil.RunOptions{Env: env}, bin, append(args, dir)...)
}

// repairKillEnv is read by binaries built with the tag repairtesthook
// (internal/repair/step_testhook.go): set to N, -repair kills itself
// after its N-th durable change. Release builds have no such hook.
const repairKillEnv = "GOCRYPTFS_TEST_REPAIR_KILL_AFTER"

var hookBin struct {
	once sync.Once
	path string
	err  error
}

// hookedBinary builds (once) gocryptfs with the tag repairtesthook, next
// to the binary under test, and returns its path.
func hookedBinary(t *testing.T) string {
	t.Helper()
	hookBin.once.Do(func() {
		root, err := testutil.ProjectRoot()
		if err != nil {
			hookBin.err = err
			return
		}
		tags := "repairtesthook"
		if bt := testutil.BuildTags(); bt != "" {
			tags += "," + bt
		}
		hookBin.path = filepath.Join(filepath.Dir(gocryptfsBin), "gocryptfs-repairtesthook")
		cmd := exec.Command("go", "build", "-tags", tags, "-o", hookBin.path, ".")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			hookBin.err = fmt.Errorf("go build -tags %s: %w\n%s", tags, err, out)
		}
	})
	if hookBin.err != nil {
		t.Fatal(hookBin.err)
	}
	return hookBin.path
}

// copyDir copies a CIPHERDIR (files, dirs, symlinks).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "c")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

var tsRE = regexp.MustCompile(`[0-9]{8}T[0-9]{6}Z(-[0-9]+)?`)

// snapshot maps every regular file and symlink below dir (relative path
// with run timestamps replaced by TS) to its bytes; journals are left out.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = tsRE.ReplaceAllString(rel, "TS")
		switch {
		case strings.HasSuffix(rel, ".journal"):
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			m[rel] = string(b)
			return err
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			m[rel] = "->" + s
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// plainView decrypts the tree, with run timestamps replaced by TS.
func plainView(t *testing.T, c coretest.Core, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for k, v := range coretest.PlainTree(t, c, dir) {
		m[tsRE.ReplaceAllString(k, "TS")] = v
	}
	return m
}

// quarantined returns the quarantine part of a snapshot, keyed by the
// original relative path.
func quarantined(snap map[string]string) map[string]string {
	q := map[string]string{}
	prefix := nametransform.QuarantineDirName + "/TS/"
	for k, v := range snap {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			q[rest] = v
		}
	}
	return q
}

// noLoss fails unless every file of orig is, byte for byte, still in its
// place or in the quarantine.
func noLoss(t *testing.T, orig map[string]string, dir string) {
	t.Helper()
	now := snapshot(t, dir)
	q := quarantined(now)
	for k, v := range orig {
		if now[k] == v || q[k] == v {
			continue
		}
		t.Errorf("%s: original bytes neither in place nor in the quarantine", k)
	}
}

func diffMaps(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k)
		}
	}
	slices.Sort(d)
	return d
}

// TestRepairCLI repairs the faulty tree through the binary with -json:
// every line is a JSON object, findings of every kind are there, the
// summary says clean, exit 0; then -fsck exits 0 and a second -repair
// does nothing.
func TestRepairCLI(t *testing.T) {
	dir, c := faultyTree(t)
	r := gocryptfs(t, append(append([]string{"-fsck"}, masterkeyArgs(t)...), dir)...)
	testutil.Expect(t, r, 26)
	orig := snapshot(t, dir)
	// Without -q: -json keeps stdout pure JSON by itself.
	args := append(append([]string{"-fsck", "-repair", "-json"}, masterkeyArgs(t)...), dir)
	r = gocryptfs(t, args...)
	testutil.Expect(t, r, 0)
	kinds := map[string]bool{}
	actions := map[string]int{}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var last map[string]any
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q (%v)", l, err)
		}
		switch ev["type"] {
		case "finding":
			kinds[ev["kind"].(string)] = true
		case "action":
			actions[ev["action"].(string)]++
		}
		last = ev
	}
	for _, k := range []string{"corrupt-blocks", "truncated-block", "bad-header-version", "diriv-missing",
		"long-name-file-damaged", "orphan-long-name-file", "undecryptable-name", "undecryptable-symlink"} {
		if !kinds[k] {
			t.Errorf("no finding of kind %s in %s", k, r.Stdout)
		}
	}
	for _, a := range []string{"salvaged", "quarantined", "header-rewritten", "diriv-restored", "diriv-recreated"} {
		if actions[a] == 0 {
			t.Errorf("no action %s", a)
		}
	}
	if last["type"] != "summary" || last["clean"] != true {
		t.Errorf("last line %v", last)
	}
	noLoss(t, orig, dir)
	view := plainView(t, c, dir)
	for p, want := range map[string]string{
		"ok/keep.txt":                          "file:keep me",
		"ok/link":                              "link:keep.txt",
		"e/x.txt":                              "file:x",
		"flip/y.txt":                           "file:y",
		"lost+found/TS/AAAAAAAAAAAAAAAAAAAAAA": "file:content under a bad name",
		"status.txt":                           "file:" + testutil.VectorContent,
	} {
		if view[p] != want {
			t.Errorf("%s: got %q, want %q", p, view[p], want)
		}
	}
	testutil.Expect(t, gocryptfs(t, append(append([]string{"-fsck"}, masterkeyArgs(t)...), dir)...), 0, "no problems found")
	sum := testutil.TreeSum(t, dir)
	r = runRepair(t, dir, nil, "-json")
	testutil.Expect(t, r, 0, `"actions":0`)
	if testutil.TreeSum(t, dir) != sum {
		t.Error("second -repair changed the tree")
	}
}

// TestRepairRefusesMounted: -repair on a CIPHERDIR mounted by either
// implementation exits 11 and changes nothing.
func TestRepairRefusesMounted(t *testing.T) {
	for name, bin := range map[string]string{"ours": gocryptfsBin, "reference": testutil.ReferenceBin} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(bin); err != nil {
				t.Skipf("reference binary: %v", err)
			}
			dir, _ := faultyTree(t)
			testutil.MountFS(t, bin, dir, "-q", "-extpass", "echo "+testutil.Password)
			sum := testutil.TreeSum(t, dir)
			testutil.Expect(t, runRepair(t, dir, nil), 11, "is mounted")
			if testutil.TreeSum(t, dir) != sum {
				t.Error("refused repair changed the tree")
			}
		})
	}
}

// TestRepairCrash kills -repair (SIGKILL) after each of its durable
// steps in turn, then at a few random moments; after every kill no
// original byte may be lost, and a rerun must reach exactly the state of
// an uninterrupted run (plaintext view and quarantine).
func TestRepairCrash(t *testing.T) {
	base, c := faultyTree(t)
	orig := snapshot(t, base)
	ref := copyDir(t, base)
	testutil.Expect(t, runRepair(t, ref, nil), 0)
	refView, refQ := plainView(t, c, ref), quarantined(snapshot(t, ref))
	finish := func(t *testing.T, d string) {
		t.Helper()
		noLoss(t, orig, d)
		testutil.Expect(t, runRepair(t, d, nil), 0)
		if diff := diffMaps(plainView(t, c, d), refView); len(diff) > 0 {
			t.Errorf("plaintext view differs from the uninterrupted run: %v", diff)
		}
		snap := snapshot(t, d)
		if diff := diffMaps(quarantined(snap), refQ); len(diff) > 0 {
			t.Errorf("quarantine differs from the uninterrupted run: %v", diff)
		}
		for k := range snap {
			if strings.Contains(k, ".tmp") {
				t.Errorf("scratch file left: %s", k)
			}
		}
		noLoss(t, orig, d)
	}
	hooked := hookedBinary(t)
	n := 1
	for ; n < 1000; n++ {
		d := copyDir(t, base)
		r := runRepairWith(t, hooked, d, []string{repairKillEnv + "=" + fmt.Sprint(n)})
		if r.Code == 0 {
			break // fewer than n steps: the whole run is covered
		}
		if r.Code != -1 {
			t.Fatalf("step %d: want death by SIGKILL, got %v", n, r)
		}
		t.Run(fmt.Sprint("step", n), func(t *testing.T) { finish(t, d) })
	}
	if n < 20 {
		t.Errorf("only %d steps: the kill hook does not see the repair", n)
	}
	t.Logf("killed after each of %d steps", n-1)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		d := copyDir(t, base)
		args := append(append([]string{"-fsck", "-repair", "-q"}, masterkeyArgs(t)...), d)
		cmd := exec.Command(gocryptfsBin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rnd.IntN(100)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Run(fmt.Sprint("random", i), func(t *testing.T) { finish(t, d) })
	}
}

// mountedView reads everything below a mount point in the format of
// coretest.PlainTree.
func mountedView(t *testing.T, mnt string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mnt, p)
		if rel == "." {
			return nil
		}
		rel = tsRE.ReplaceAllString(rel, "TS")
		switch {
		case d.IsDir():
			m[rel] = "dir"
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			m[rel] = "file:" + string(b)
			return err
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			m[rel] = "link:" + s
			return err
		default:
			m[rel] = "other:" + d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRepairReferenceMounts: Debian's gocryptfs 2.3 mounts a repaired
// directory and reads every file, with the same contents our mount and
// the core show; neither mount shows the quarantine.
func TestRepairReferenceMounts(t *testing.T) {
	testutil.RequireReference(t)
	dir, c := faultyTree(t)
	testutil.Expect(t, runRepair(t, dir, nil), 0)
	want := plainView(t, c, dir)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(testutil.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{testutil.ReferenceBin, gocryptfsBin} {
		mnt := testutil.MountFS(t, bin, dir, "-q", "-passfile", pw)
		got := mountedView(t, mnt)
		if diff := diffMaps(got, want); len(diff) > 0 {
			t.Errorf("%s: mount differs from the repaired tree: %v", bin, diff)
		}
		if _, ok := got[nametransform.QuarantineDirName]; ok {
			t.Errorf("%s shows the quarantine", bin)
		}
		if !bytes.Contains([]byte(got["lost+found/TS/big.bin.lost-ranges.txt"]), []byte("4096-8192")) {
			t.Errorf("%s: lost ranges file reads %q", bin, got["lost+found/TS/big.bin.lost-ranges.txt"])
		}
		testutil.UnmountDir(t, mnt)
	}
}

// TestRepairHookNotShipped: the release binary has no way to be killed
// mid-repair by the environment; only builds with the tag repairtesthook
// (TestRepairCrash builds one) do.
func TestRepairHookNotShipped(t *testing.T) {
	b, err := os.ReadFile(gocryptfsBin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(repairKillEnv)) {
		t.Errorf("%s contains %s", gocryptfsBin, repairKillEnv)
	}
	dir, _ := faultyTree(t)
	testutil.Expect(t, runRepair(t, dir, []string{repairKillEnv + "=1"}), 0)
}

// TestRepairRefusesPlantedJournal: through the binary, a journal planted
// in gocryptfs.quarantine by whoever holds the storage (naming a victim's
// ~/.ssh through ".." and through a symlink) is refused with exit 11 and
// a message naming it; nothing inside or outside CIPHERDIR changes.
func TestRepairRefusesPlantedJournal(t *testing.T) {
	dir, _ := faultyTree(t)
	home := filepath.Join(t.TempDir(), "home")
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh, filepath.Join(dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, ssh)
	q := filepath.Join(dir, nametransform.QuarantineDirName)
	if err := os.Mkdir(q, 0o700); err != nil {
		t.Fatal(err)
	}
	// The journal format of the code before the fix, which acted on it.
	j := `{"op":"begin"}` + "\n" + `{"op":"diriv","dir":"","plain":"","entries":["` + rel + `/id_ed25519","lnk/id_ed25519"]}` + "\n"
	if err := os.WriteFile(filepath.Join(q, "20250101T000000Z.journal"), []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	sum, homeSum := testutil.TreeSum(t, dir), testutil.TreeSum(t, home)
	testutil.Expect(t, runRepair(t, dir, nil), 11, "20250101T000000Z.journal", "journal refused")
	if testutil.TreeSum(t, dir) != sum || testutil.TreeSum(t, home) != homeSum {
		t.Error("a refused journal changed something")
	}
}
