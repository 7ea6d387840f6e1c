package tools_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// walkTree plants the damage of the side-by-side walk in a copy of the
// reference vector: a directory that lost its gocryptfs.diriv (holding a
// file and a subdirectory with its own IV), a file cut inside its
// header, one whose header (file ID) was overwritten, one cut inside a
// block's overhead, and a sync tool's conflict copy of a healthy file.
func walkTree(t *testing.T) string {
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
	data := make([]byte, 2*4096+500)
	for i := range data {
		data[i] = byte(i * 7)
	}
	d := coretest.Mkdir(t, c, dir, "photos")
	coretest.WriteFile(t, c, dir, "photos/cat.jpg", data)
	coretest.Mkdir(t, c, dir, "photos/trip")
	coretest.WriteFile(t, c, dir, "photos/trip/beach.jpg", data)
	must(os.Remove(abs(filepath.Join(d, nametransform.DirIVFilename))))
	must(os.Truncate(abs(coretest.WriteFile(t, c, dir, "trunc.bin", data)), 10))
	hdr := coretest.WriteFile(t, c, dir, "hdr.bin", data)
	f, err := os.OpenFile(abs(hdr), os.O_RDWR, 0)
	must(err)
	_, err = f.WriteAt(make([]byte, contentenc.HeaderLen), 0)
	must(err)
	f.Close()
	cbs := int64(c.CE.CipherBS())
	must(os.Truncate(abs(coretest.WriteFile(t, c, dir, "tail.bin", data)), contentenc.HeaderLen+2*cbs+5))
	x := coretest.WriteFile(t, c, dir, "x.txt", []byte("x"))
	b, err := os.ReadFile(abs(x))
	must(err)
	must(os.WriteFile(abs(x+".sync-conflict-20260101-120000-ABCDEFG"), b, 0o644))
	return dir
}

// TestFsckJSONNamesEveryKind: -fsck -json names a sync conflict copy
// "sync-conflict" (it was "kind-10") and no finding by number.
func TestFsckJSONNamesEveryKind(t *testing.T) {
	dir := walkTree(t)
	r := gocryptfs(t, append(append([]string{"-fsck", "-json"}, masterkeyArgs(t)...), dir)...)
	testutil.Expect(t, r, 26)
	kinds := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q (%v)", l, err)
		}
		if k, ok := ev["kind"].(string); ok {
			kinds[k] = true
			if strings.HasPrefix(k, "kind-") {
				t.Errorf("finding without a name: %s", l)
			}
		}
	}
	if !kinds["sync-conflict"] {
		t.Errorf("no sync-conflict finding in %s", r.Stdout)
	}
}

// TestRepairLogNames: after a lost gocryptfs.diriv, the repair log names
// entries by their plaintext paths where they decrypt, a salvaged
// directory by the plaintext names inside it, and a file of which
// nothing could be saved by saying so (never "0 bytes lost").
func TestRepairLogNames(t *testing.T) {
	dir := walkTree(t)
	r := gocryptfs(t, append(append([]string{"-fsck", "-repair"}, masterkeyArgs(t)...), dir)...)
	testutil.Expect(t, r, 0, "fsck summary: no problems found")
	log := r.Stdout + r.Stderr
	if strings.Contains(log, " 0 bytes lost") {
		t.Errorf("log says \"0 bytes lost\":\n%s", log)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`repair: quarantined "trunc.bin" \(stored as "[^"]+"\).*\(nothing could be saved: file header truncated to 10 bytes`),
		regexp.MustCompile(`repair: quarantined "hdr.bin" \(stored as "[^"]+"\).*\(nothing could be saved, all 8692 bytes lost: file header \(file ID\) destroyed`),
		regexp.MustCompile(`repair: salvaged "tail.bin" \(stored as "[^"]+"\), saved as "lost\+found/[^/]+/tail.bin" \(everything after byte 8192 lost, listed in .lost-ranges.txt\)`),
		regexp.MustCompile(`repair: diriv-recreated "photos" \(stored as "[^"]+/gocryptfs.diriv"\)`),
		regexp.MustCompile(`repair: salvaged an entry of "photos" whose name cannot be decrypted \(stored as "[^"]+"\), saved as "lost\+found/[^/]+/photos/[^"]+", a directory holding "beach.jpg"`),
		regexp.MustCompile(`repair: salvaged an entry of "photos" whose name cannot be decrypted \(stored as "[^"]+"\), saved as "lost\+found/[^/]+/photos/[^"]+", original in`),
	} {
		if !want.MatchString(log) {
			t.Errorf("log does not match %s:\n%s", want, log)
		}
	}
}

// TestRepairMountedNoPrompt: -fsck -repair of a mounted CIPHERDIR exits 11
// before it asks for the password (the -extpass program never runs).
func TestRepairMountedNoPrompt(t *testing.T) {
	dir := initFS(t)
	mountFS(t, dir)
	marker := filepath.Join(t.TempDir(), "asked")
	r := gocryptfs(t, "-fsck", "-repair", "-extpass", fmt.Sprintf("sh -c 'touch %s; echo %s'", marker, testutil.Password), dir)
	testutil.Expect(t, r, 11, "is mounted")
	if _, err := os.Stat(marker); err == nil {
		t.Error("the password was asked for before the mounted CIPHERDIR was refused")
	}
}

// repairIntEnv: binaries built with the tag repairtesthook send
// themselves SIGINT after the N-th durable change of a repair.
const repairIntEnv = "GOCRYPTFS_TEST_REPAIR_INT_AFTER"

// TestRepairAbortCounts: a -repair interrupted by SIGINT says how many
// actions it took (as many as it printed), not 0.
func TestRepairAbortCounts(t *testing.T) {
	dir, _ := faultyTree(t)
	args := append(append([]string{"-fsck", "-repair"}, masterkeyArgs(t)...), dir)
	r := testutil.Run(t, testutil.RunOptions{Env: []string{repairIntEnv + "=8"}}, hookedBinary(t), args...)
	testutil.Expect(t, r, 11, "aborted by signal")
	m := regexp.MustCompile(`aborted by signal after (\d+) actions`).FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("no action count: %v", r)
	}
	printed := 0
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "repair: ") {
			printed++
		}
	}
	if printed == 0 || m[1] != fmt.Sprint(printed) {
		t.Errorf("says %s actions, printed %d:\n%s", m[1], printed, r.Stderr)
	}
}

// TestRepairRecoversDamagedDirIV: a gocryptfs.diriv with one bit flipped
// or with bytes appended still holds the IV; -repair recovers it (the
// names tell which candidate is right), so the entries keep their
// plaintext names and places instead of going to lost+found under
// ciphertext names. An entry that does not decrypt under the recovered
// IV either (junk) is still taken out.
func TestRepairRecoversDamagedDirIV(t *testing.T) {
	v := testutil.VectorNamed(t, repairVector)
	dir := testutil.CopyCipherVector(t, v.Name)
	c := coretest.New(t, coretest.VectorOptions(t, v))
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	flip := coretest.Mkdir(t, c, dir, "flip")
	coretest.WriteFile(t, c, dir, "flip/a.txt", []byte("alpha"))
	coretest.WriteFile(t, c, dir, "flip/"+strings.Repeat("L", 200), []byte("long"))
	coretest.Mkdir(t, c, dir, "flip/sub")
	coretest.WriteFile(t, c, dir, "flip/sub/b.txt", []byte("beta"))
	if err := os.WriteFile(abs(filepath.Join(flip, "BBBBBBBBBBBBBBBBBBBBBB")), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.FlipByte(t, abs(filepath.Join(flip, nametransform.DirIVFilename)), 11, 0x40)
	long := coretest.Mkdir(t, c, dir, "appended")
	coretest.WriteFile(t, c, dir, "appended/x.txt", []byte("x"))
	f, err := os.OpenFile(abs(filepath.Join(long, nametransform.DirIVFilename)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("\n"))
	f.Close()
	testutil.Expect(t, gocryptfs(t, append(append([]string{"-fsck"}, masterkeyArgs(t)...), dir)...), 26)
	r := gocryptfs(t, append(append([]string{"-fsck", "-repair"}, masterkeyArgs(t)...), dir)...)
	testutil.Expect(t, r, 0, "fsck summary: no problems found",
		`repair: diriv-restored "flip"`, "bit 94 of the damaged gocryptfs.diriv was flipped",
		`repair: diriv-restored "appended"`, "first 16 of the 17 bytes")
	view := plainView(t, c, dir)
	for p, want := range map[string]string{
		"flip/a.txt":                       "file:alpha",
		"flip/" + strings.Repeat("L", 200): "file:long",
		"flip/sub/b.txt":                   "file:beta",
		"appended/x.txt":                   "file:x",
	} {
		if view[p] != want {
			t.Errorf("%s: got %q, want %q", p, view[p], want)
		}
	}
	for p := range view {
		if strings.HasPrefix(p, "lost+found") {
			t.Errorf("moved to lost+found: %s", p)
		}
	}
	if !strings.Contains(r.Stdout, `repair: quarantined an entry of "flip" whose name cannot be decrypted`) {
		t.Errorf("the junk entry was not quarantined: %v", r)
	}
}
