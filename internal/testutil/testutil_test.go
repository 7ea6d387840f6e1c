package testutil

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMustHex(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"00ff", "\x00\xff"},
		{"00 ff\n\t10-20", "\x00\xff\x10\x20"},
		{"ed7f6d83-40cce86c", "\xed\x7f\x6d\x83\x40\xcc\xe8\x6c"},
		{"", ""},
	} {
		if got := MustHex(t, c.in); string(got) != c.want {
			t.Errorf("MustHex(%q) = %x", c.in, got)
		}
	}
}

func TestMasterKey(t *testing.T) {
	k := MasterKey()
	if !bytes.Equal(k, MustHex(t, MasterKeyHex)) {
		t.Fatalf("MasterKey() = %x", k)
	}
	k[0] = 0xff
	if MasterKey()[0] != 0 {
		t.Error("MasterKey() shares its slice")
	}
}

// The flags are the last column of the vectors README, in its order.
func TestVectorFlags(t *testing.T) {
	want := map[string]string{
		"v0.7":                             "-raw64=false -hkdf=false",
		"v0.7-plaintextnames":              "-plaintextnames -raw64=false -hkdf=false",
		"v0.9":                             "-raw64=false -hkdf=false",
		"v1.1-aessiv":                      "-aessiv -raw64=false -hkdf=false",
		"v1.3":                             "",
		"v2.2-deterministic-names":         "-deterministic-names",
		"v2.2-xchacha":                     "-xchacha",
		"v2.2-xchacha-deterministic-names": "-xchacha -deterministic-names",
		"v1.1-reverse":                     "-raw64=false -hkdf=false",
		"v1.1-reverse-plaintextnames":      "-plaintextnames -raw64=false -hkdf=false",
		"v1.3-reverse":                     "",
	}
	all := AllVectors()
	if len(all) != len(want) {
		t.Errorf("%d vectors, want %d", len(all), len(want))
	}
	for _, v := range all {
		if got := strings.Join(v.Flags(), " "); got != want[v.Name] {
			t.Errorf("%s: flags %q, want %q", v.Name, got, want[v.Name])
		}
		if len(v.Key(t)) != 32 {
			t.Errorf("%s: key of %d bytes", v.Name, len(v.Key(t)))
		}
		if (v.ConfigName() == ".gocryptfs.reverse.conf") != v.Reverse {
			t.Errorf("%s: config %s", v.Name, v.ConfigName())
		}
		if got := VectorNamed(t, v.Name); got.MasterKey != v.MasterKey {
			t.Errorf("VectorNamed(%s) = %+v", v.Name, got)
		}
	}
}

func TestIsTarget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"status.txt", true},
		{"/a/b/c/d", true},
		{"K3lJ_vVb8rYZQGpDCkJcgNGbWxM1", true},
		{"", false},
		{"\x00\x02abc", false},
		{"bin\x01ary", false},
	} {
		if got := isTarget([]byte(c.in)); got != c.want {
			t.Errorf("isTarget(%q) = %v", c.in, got)
		}
	}
}

// symlinks maps the symlinks below dir to their targets.
func symlinks(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type()&os.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, p)
			out[rel], err = os.Readlink(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCopyCipherVector(t *testing.T) {
	for _, v := range append(ForwardVectors(), Vector{Name: "v0.4"}) {
		t.Run(v.Name, func(t *testing.T) {
			dir := CopyCipherVector(t, v.Name)
			if filepath.Base(dir) != v.Name {
				t.Errorf("copied to %s", dir)
			}
			links := symlinks(t, dir)
			if len(links) != 2 {
				t.Errorf("symlinks %q, want two", links)
			}
			if v.PlaintextNames && !maps2Equal(links, VectorSymlinks()) {
				t.Errorf("symlinks %q", links)
			}
			st, err := os.Stat(filepath.Join(dir, "gocryptfs.conf"))
			if err != nil || st.Mode().Perm() != 0o400 {
				t.Errorf("gocryptfs.conf: %v %v", st, err)
			}
		})
	}
}

func TestCopyPlainVector(t *testing.T) {
	for _, v := range ReverseVectors() {
		t.Run(v.Name, func(t *testing.T) {
			dir := CopyPlainVector(t, v.Name)
			if got := symlinks(t, dir); !maps2Equal(got, VectorSymlinks()) {
				t.Errorf("symlinks %q", got)
			}
			for _, f := range []string{"status.txt", VectorLongName} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != VectorContent {
					t.Errorf("%.20s: %q %v", f, b, err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "status.txt"), nil, 0o644); err != nil {
				t.Errorf("copy not writable: %v", err)
			}
		})
	}
}

func maps2Equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x" + strings.Repeat("y", i) + " hit\n"))
			}
		})
	}
	wg.Wait()
	if n := b.CountLines("hit"); n != 800 {
		t.Errorf("CountLines = %d", n)
	}
	if n := b.CountLines("yyyyyyy "); n != 100 {
		t.Errorf("CountLines(7 y) = %d", n)
	}
	var lb SyncBuffer
	lb.Logger(slog.LevelInfo).Debug("hidden")
	lb.Logger(slog.LevelDebug).Debug("shown", "k", 1)
	if got := lb.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "msg=shown k=1") {
		t.Errorf("logged %q", got)
	}
}

func TestUnmountRetries(t *testing.T) {
	calls := 0
	Unmount(t, t.TempDir(), func() error {
		if calls++; calls < 3 {
			return errors.New("busy")
		}
		return nil
	})
	if calls != 3 {
		t.Errorf("%d calls", calls)
	}
}

func TestTreeSum(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("a"), 0o644)
	os.Symlink("f", filepath.Join(dir, "l"))
	sum := TreeSum(t, dir)
	if TreeSum(t, dir) != sum {
		t.Fatal("TreeSum is not stable")
	}
	for i, change := range []func(){
		func() { os.WriteFile(filepath.Join(dir, "f"), []byte("b"), 0o644) },
		func() { os.Chmod(filepath.Join(dir, "f"), 0o600) },
		func() { os.Remove(filepath.Join(dir, "l")); os.Symlink("g", filepath.Join(dir, "l")) },
		func() { os.Link(filepath.Join(dir, "f"), filepath.Join(dir, "h")) },
		func() { unix.Setxattr(filepath.Join(dir, "f"), "user.x", []byte("1"), 0) },
	} {
		change()
		next := TreeSum(t, dir)
		if next == sum {
			t.Errorf("change %d not seen", i)
		}
		sum = next
	}
}

func TestRun(t *testing.T) {
	r := Run(t, RunOptions{Stdin: "in", Dir: "/", Env: []string{"TESTUTIL_X=y"}}, "/bin/sh", "-c", `cat; pwd; echo "$TESTUTIL_X"; echo err >&2; exit 3`)
	if r.Code != 3 || r.Stdout != "in/\ny\n" || r.Stderr != "err\n" {
		t.Errorf("%v", r)
	}
	Expect(t, r, 3, "in/", "err")
	if !strings.Contains(r.String(), "exit 3") {
		t.Errorf("String: %q", r.String())
	}
}

func TestWaitExitTimeout(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := WaitExit(cmd, 100*time.Millisecond); !errors.Is(err, errTimeout) {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestBinaryName(t *testing.T) {
	for in, want := range map[string]string{".": "gocryptfs", "./gocryptfs-xray": "gocryptfs-xray"} {
		if got := BinaryName(in); got != want {
			t.Errorf("BinaryName(%q) = %q", in, got)
		}
	}
	if tags := BuildTags(); !slices.Contains([]string{"", "without_openssl"}, tags) {
		t.Errorf("BuildTags() = %q", tags)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	if !WaitFor(time.Second, func() bool { n++; return n == 3 }) {
		t.Error("WaitFor gave up")
	}
	if WaitFor(120*time.Millisecond, func() bool { return false }) {
		t.Error("WaitFor of false succeeded")
	}
	if d := NewDir(t, "x"); filepath.Base(d) != "x" {
		t.Errorf("NewDir: %s", d)
	}
}

func TestTV4CipherDir(t *testing.T) {
	dir := TV4CipherDir(t)
	for p, iv := range map[string]string{"gocryptfs.diriv": TV4RootIV, TV4Dir1 + "/gocryptfs.diriv": TV4Dir1IV} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || !bytes.Equal(b, MustHex(t, iv)) {
			t.Errorf("%s: %x %v", p, b, err)
		}
	}
}

func TestMallocsPerRun(t *testing.T) {
	var sink []byte
	if n := MallocsPerRun(100, func() { sink = make([]byte, 64) }); n < 1 || n > 1.5 {
		t.Errorf("one allocation per run counted as %v", n)
	}
	if n := MallocsPerRun(10, func() {}); n > 0.5 {
		t.Errorf("no allocation counted as %v", n)
	}
	_ = sink
}

func TestMountTmpfs(t *testing.T) {
	dir := t.TempDir()
	MountTmpfs(t, dir, "size=64k")
	if !IsMounted(dir) || !strings.Contains(MountLine(dir), "tmpfs") {
		t.Fatalf("not a tmpfs: %q", MountLine(dir))
	}
	err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 1<<20), 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing 1 MiB to a 64 KiB tmpfs: %v", err)
	}
}

// The vectors are read from the repository, not from outside it, and a
// missing vectors directory is an error (VectorsDir fails the test on it).
func TestVectorsInRepository(t *testing.T) {
	root, err := ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	if d := VectorsDir(t); d != filepath.Join(root, "testdata", "vectors", "reference-examples") {
		t.Errorf("VectorsDir = %s, outside the repository's testdata", d)
	}
	if d, err := vectorsIn(t.TempDir()); err == nil {
		t.Errorf("vectorsIn(empty dir) = %s, want an error", d)
	}
	names := map[string]bool{"content": true}
	for _, v := range AllVectors() {
		names[v.Name] = true
	}
	for _, n := range TooOldVectors() {
		names[n] = true
	}
	for n := range names {
		VectorDir(t, n)
	}
}

// listing describes every entry below dir: its type and mode bits, and a
// regular file's content or a symlink's target.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, link, err := ReadStored(p)
		switch {
		case d.IsDir():
			out[rel] = "dir"
			return nil
		case err != nil:
			return err
		case link:
			out[rel] = "symlink " + string(data)
		default:
			st, _ := d.Info()
			out[rel] = fmt.Sprintf("file %o %q", st.Mode().Perm(), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// flatten copies the tree src to dst with every symlink stored as a regular
// file holding its target, as a copy through a medium without symlinks
// leaves the vectors.
func flatten(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, _, err := ReadStored(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The copy helpers give the same tree whether the vector stores its
// symlinks as symlinks or flattened.
func TestCopyTreeBothForms(t *testing.T) {
	var vecs []Vector
	for _, n := range TooOldVectors() {
		vecs = append(vecs, Vector{Name: n})
	}
	for _, v := range append(vecs, AllVectors()...) {
		t.Run(v.Name, func(t *testing.T) {
			flattened := flattenedCipher
			if v.Reverse {
				flattened = flattenedPlain
			}
			src := VectorDir(t, v.Name)
			flat := filepath.Join(t.TempDir(), "flat")
			flatten(t, src, flat)
			a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
			if err := copyTree(src, a, flattened); err != nil {
				t.Fatal(err)
			}
			if err := copyTree(flat, b, flattened); err != nil {
				t.Fatal(err)
			}
			la, lb := listing(t, a), listing(t, b)
			if !maps2Equal(la, lb) {
				t.Errorf("copies differ:\n from repository %q\n from flattened  %q", la, lb)
			}
			n := 0
			for _, e := range la {
				if strings.HasPrefix(e, "symlink ") {
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d symlinks in the copy, want 2: %q", n, la)
			}
		})
	}
}

// A directory the reference left empty is stored with EmptyDirMarker in
// it; the copy is the empty directory. A marker is only ever alone in its
// directory, else it marks nothing.
func TestEmptyDirMarker(t *testing.T) {
	src := t.TempDir()
	for _, d := range []string{"empty", "full"} {
		if err := os.Mkdir(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"empty/" + EmptyDirMarker, "full/file"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte{0, 2}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := copyTree(src, dst, flattenedCipher); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{".": "dir", "empty": "dir", "full": "dir", "full/file": `file 644 "\x00\x02"`}
	if got := listing(t, dst); !maps2Equal(got, want) {
		t.Errorf("copy %q, want %q", got, want)
	}
	err := filepath.WalkDir(VectorsDir(t), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != EmptyDirMarker {
			return err
		}
		if ents, err := os.ReadDir(filepath.Dir(p)); err != nil || len(ents) != 1 {
			t.Errorf("%s is not alone in its directory (%d entries, %v)", p, len(ents), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadStored(t *testing.T) {
	dir := t.TempDir()
	p, l := filepath.Join(dir, "f"), filepath.Join(dir, "l")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", l); err != nil {
		t.Fatal(err)
	}
	if b, link, err := ReadStored(p); err != nil || link || string(b) != "data" {
		t.Errorf("file: %q %v %v", b, link, err)
	}
	if b, link, err := ReadStored(l); err != nil || !link || string(b) != "f" {
		t.Errorf("symlink: %q %v %v", b, link, err)
	}
	if _, _, err := ReadStored(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}
