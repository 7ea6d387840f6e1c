package tools_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/testutil"

	"golang.org/x/sys/unix"
)

// populate fills a mounted plaintext tree with one of every kind of entry
// and returns the plaintext paths created.
func populate(t *testing.T, mnt string) []string {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, data []byte) {
		must(os.WriteFile(filepath.Join(mnt, p), data, 0o644))
	}
	long := strings.Repeat("L", 200)
	write("empty", nil)
	write("one", []byte("a"))
	write("hello.txt", []byte("hello world\n"))
	write("f4096", []byte(strings.Repeat("x", 4096)))
	write("f10000", []byte(strings.Repeat("y", 10000)))
	must(os.Mkdir(filepath.Join(mnt, "dir1"), 0o755))
	must(os.Mkdir(filepath.Join(mnt, "dir1/sub"), 0o755))
	write("dir1/file.txt", []byte("abc"))
	write("dir1/sub/deep.txt", []byte("deep"))
	write("dir1/"+long, []byte("long"))
	write("xattrfile", []byte("x"))
	must(os.Symlink("hello.txt", filepath.Join(mnt, "link1")))
	must(os.Symlink("/some/absolute/target", filepath.Join(mnt, "dir1/link2")))
	must(os.Link(filepath.Join(mnt, "one"), filepath.Join(mnt, "hardlink")))
	must(unix.Mkfifo(filepath.Join(mnt, "fifo"), 0o644))
	must(unix.Setxattr(filepath.Join(mnt, "xattrfile"), "user.foo", []byte("bar"), 0))
	must(unix.Setxattr(filepath.Join(mnt, "dir1"), "user.dirattr", []byte("xyz"), 0))
	fh, err := os.Create(filepath.Join(mnt, "hole"))
	must(err)
	_, err = fh.WriteAt([]byte("end"), 3*4096+100) // blocks 0-2 stay holes
	must(err)
	must(fh.Close())
	f2, err := os.Create(filepath.Join(mnt, "alignedhole"))
	must(err)
	must(f2.Truncate(2 * 4096))
	must(f2.Close())
	return []string{"empty", "one", "hello.txt", "f4096", "f10000", "dir1", "dir1/sub", "dir1/file.txt",
		"dir1/sub/deep.txt", "dir1/" + long, "xattrfile", "link1", "dir1/link2", "hardlink", "fifo", "hole", "alignedhole"}
}

// cipherPaths asks the control socket for the ciphertext path of every
// plaintext path.
func cipherPaths(t *testing.T, sock string, plain []string) map[string]string {
	t.Helper()
	r := xray(t, strings.Join(plain, "\n")+"\n", "-encrypt-paths", sock)
	testutil.Expect(t, r, 0)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != len(plain) {
		t.Fatalf("got %d answers for %d paths: %v", len(lines), len(plain), r)
	}
	m := make(map[string]string)
	for i, p := range plain {
		m[p] = lines[i]
	}
	return m
}

// freshTree creates, populates and unmounts a filesystem and returns the
// cipherdir and the ciphertext path of each plaintext path.
func freshTree(t *testing.T, initFlags ...string) (string, map[string]string) {
	t.Helper()
	testutil.RequireFuse(t)
	dir := initFS(t, initFlags...)
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	mnt := mountFS(t, dir, "-ctlsock", sock)
	plain := populate(t, mnt)
	enc := cipherPaths(t, sock, plain)
	testutil.UnmountDir(t, mnt)
	for p, c := range enc {
		if _, err := os.Lstat(filepath.Join(dir, c)); err != nil {
			t.Fatalf("ctlsock says %q is stored as %q, which does not exist: %v", p, c, err)
		}
	}
	return dir, enc
}

func fsck(t *testing.T, dir string, extra ...string) testutil.Result {
	t.Helper()
	return gocryptfs(t, append(append([]string{"-fsck", "-extpass", "echo " + testutil.Password}, extra...), dir)...)
}

func TestFsckCleanFresh(t *testing.T) {
	for _, flags := range [][]string{nil, {"-xchacha"}, {"-aessiv"}, {"-deterministic-names"}, {"-plaintextnames"}, {"-longnamemax", "62"}} {
		t.Run(strings.Join(append([]string{"default"}, flags...), " "), func(t *testing.T) {
			dir, _ := freshTree(t, flags...)
			before := testutil.TreeSum(t, dir)
			r := fsck(t, dir)
			testutil.Expect(t, r, 0, "Checking filesystem...", "fsck summary: no problems found")
			if r.Stderr != "" {
				t.Errorf("unexpected stderr: %v", r)
			}
			if testutil.TreeSum(t, dir) != before {
				t.Error("-fsck modified the cipherdir")
			}
		})
	}
}

func flip(t *testing.T, p string, off int64) {
	t.Helper()
	testutil.FlipByte(t, p, off, 0x40)
}

// TestFsckPlantedFaults plants one fault of every kind into a fresh
// filesystem: -fsck reports each one, exits 26, and writes nothing.
func TestFsckPlantedFaults(t *testing.T) {
	dir, enc := freshTree(t)
	c := func(p string) string { return filepath.Join(dir, enc[p]) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	long := "dir1/" + strings.Repeat("L", 200)
	flip(t, c("f10000"), 18+4128+77)                                                     // block 1
	must(os.Truncate(c("f4096"), 18+20))                                                 // incomplete last block
	must(os.WriteFile(c("hello.txt"), append([]byte{0, 3}, make([]byte, 60)...), 0o644)) // bad header
	must(os.Remove(c(long) + ".name"))                                                   // broken long name
	must(os.Remove(filepath.Join(c("dir1/sub"), "gocryptfs.diriv")))                     // missing diriv
	must(os.WriteFile(filepath.Join(dir, "foo"), []byte("x"), 0o644))                    // undecryptable name
	must(os.Remove(c("link1")))
	must(os.Symlink("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", c("link1"))) // corrupt target
	v := make([]byte, 100)
	names := make([]byte, 1000)
	n, err := unix.Listxattr(c("xattrfile"), names)
	must(err)
	xname := strings.TrimRight(string(names[:n]), "\x00")
	m, err := unix.Getxattr(c("xattrfile"), xname, v)
	must(err)
	v[m-1] ^= 1
	must(unix.Setxattr(c("xattrfile"), xname, v[:m], 0))                        // corrupt xattr value
	must(unix.Setxattr(c("dir1"), "user.gocryptfs.notbase64!", []byte("x"), 0)) // corrupt xattr name
	flip(t, c("hole"), 18+3*4128+20)                                            // block after holes
	must(os.Truncate(c("empty"), 0))

	before := testutil.TreeSum(t, dir)
	r := fsck(t, dir)
	if testutil.TreeSum(t, dir) != before {
		t.Error("-fsck modified the cipherdir")
	}
	want := []string{
		`fsck: corrupt entry in dir "": "foo"`,
		`fsck: error reading file "f10000" (inum `, "corrupt block #1",
		`fsck: error reading file "f4096" (inum `, "corrupt block #0",
		`fsck: error reading file "hello.txt" (inum `, "ParseHeader: invalid version, want=2 have=3",
		`fsck: corrupt entry in dir "dir1": "` + filepath.Base(enc[long]) + `"`,
		`fsck: error reading dir "dir1/sub": `,
		`fsck: error reading symlink "link1": `,
		`fsck: error reading xattr "user.foo" from "xattrfile": `,
		`fsck: corrupt xattr name on file "dir1": "user.gocryptfs.notbase64!"`,
		`fsck: error reading file "hole" (inum `, "corrupt block #3",
		"fsck summary: 10 corrupt files, 0 files skipped",
	}
	testutil.Expect(t, r, 26, want...)
	if strings.Count(r.Stderr, "fsck: ") != 10 {
		t.Errorf("want 10 problem lines and the summary on stderr: %v", r)
	}
	// Walk order: sorted plaintext names, the undecryptable root entry first.
	order := []string{`"foo"`, `on file "dir1"`, `"dir1": "gocryptfs.longname.`, `"dir1/sub"`, `"f10000"`, `"f4096"`, `"hello.txt"`, `"hole"`, `"link1"`, `"xattrfile"`}
	last := -1
	for _, o := range order {
		i := strings.Index(r.Stderr, o)
		if i < last {
			t.Errorf("%s reported out of order:\n%s", o, r.Stderr)
		}
		last = i
	}
}

// TestFsckVectors: every forward reference vector is clean (with the
// password, and one legacy vector also with -masterkey).
func TestFsckVectors(t *testing.T) {
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			dir := testutil.CopyCipherVector(t, v.Name)
			before := testutil.TreeSum(t, dir)
			testutil.Expect(t, fsck(t, dir), 0, "fsck summary: no problems found")
			if testutil.TreeSum(t, dir) != before {
				t.Error("-fsck modified the cipherdir")
			}
		})
	}
	t.Run("v0.9 -masterkey", func(t *testing.T) {
		dir := testutil.CopyCipherVector(t, "v0.9")
		v := testutil.VectorNamed(t, "v0.9")
		r := gocryptfs(t, append([]string{"-fsck", "-masterkey=" + v.MasterKey}, append(v.Flags(), dir)...)...)
		testutil.Expect(t, r, 0, "fsck summary: no problems found")
	})
	t.Run("v1.3 wrong -masterkey", func(t *testing.T) {
		// Every name and content is then undecryptable.
		dir := testutil.CopyCipherVector(t, "v1.3")
		r := gocryptfs(t, "-fsck", "-masterkey="+strings.Repeat("00", 32), dir)
		testutil.Expect(t, r, 26, `fsck: corrupt entry in dir ""`, "fsck summary: ")
	})
	for _, old := range testutil.TooOldVectors() {
		t.Run(old, func(t *testing.T) {
			testutil.Expect(t, fsck(t, testutil.CopyCipherVector(t, old)), 27)
		})
	}
}

func TestFsckErrors(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-reverse", "-extpass", "echo test", dir), 1)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo wrong", dir), 12, "Password incorrect.")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo test", filepath.Join(dir, "nonexistent")), 6)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo test", dir, dir), 1)
	// Password sources as for mounting: passfile, stdin, -masterkey.
	pf := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pf, []byte("test\n"), 0o600)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-passfile", pf, dir), 0, "no problems found")
	testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Stdin: "test\n"}, gocryptfsBin, "-fsck", dir), 0, "no problems found")
	mk := strings.TrimSpace(xray(t, "test\n", "-dumpmasterkey", filepath.Join(dir, "gocryptfs.conf")).Stdout)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-masterkey="+mk, dir), 0, "no problems found")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-masterkey=1234", dir), 14)
	// -q silences the informational lines but not the result.
	r := gocryptfs(t, "-fsck", "-q", "-extpass", "echo test", dir)
	testutil.Expect(t, r, 0)
	if r.Stdout != "" {
		t.Errorf("-q: stdout %q", r.Stdout)
	}
}

// TestFsckSignal: SIGINT and SIGTERM abort a running check with exit 11.
func TestFsckSignal(t *testing.T) {
	// Many entries make the walk take long enough to be interrupted: they
	// are created directly in the cipherdir with names encrypted by the
	// control socket of a short mount.
	dir, _ := freshTree(t)
	sock := filepath.Join(t.TempDir(), "s")
	mnt := mountFS(t, dir, "-ctlsock", sock)
	const n = 200
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("d%04d", i))
	}
	enc := cipherPaths(t, sock, names)
	testutil.UnmountDir(t, mnt)
	// Each directory gets the root's IV, so that the root-level names
	// are valid in it too; it holds 100 empty files.
	for _, nm := range names {
		d := filepath.Join(dir, enc[nm])
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		iv, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.diriv"))
		os.WriteFile(filepath.Join(d, "gocryptfs.diriv"), iv, 0o444)
		for _, nm2 := range names[:100] {
			os.WriteFile(filepath.Join(d, enc[nm2]), nil, 0o644)
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(gocryptfsBin, "-fsck", "-extpass", "echo test", dir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			readUntil(t, stdout, "Checking filesystem...", 30*time.Second)
			cmd.Process.Signal(sig)
			io.Copy(io.Discard, stdout) // Wait must only run after the last read
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 11 {
				t.Errorf("exit code %d (%v), want 11; stderr:\n%s", code, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "aborted") {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}
