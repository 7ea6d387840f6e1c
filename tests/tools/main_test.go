// Package tools_test runs the tools around the filesystem end to end:
// -fsck, the control socket and gocryptfs-xray, FIDO2 through stand-in
// tools, -passwd robustness, and fstab-style mounts through mount(8). The
// gocryptfs and gocryptfs-xray binaries are built once in TestMain; every
// mount is unmounted in t.Cleanup, and tests that mount skip only when
// /dev/fuse is missing.
package tools_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The binaries under test, built by TestMain.
var gocryptfsBin, xrayBin string

// projectRoot is the directory holding go.mod; vectorsDir the reference
// ciphertexts.
var projectRoot, vectorsDir string

// testPassword is the password of every filesystem used here.
const testPassword = "test"

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	if projectRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	vectorsDir = filepath.Join(projectRoot, "../shared/vectors/reference-examples")
	// No dot in the path: mount(8) cuts the type "fuse./path" at a dot.
	dir, err := os.MkdirTemp("", "gocryptfs-tools-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	gocryptfsBin = filepath.Join(dir, "gocryptfs")
	xrayBin = filepath.Join(dir, "gocryptfs-xray")
	ldflags := "-X gocryptfs/internal/buildinfo.gitVersion=v0.0.0-toolstest -X gocryptfs/internal/buildinfo.buildDate=2001-02-03"
	for _, b := range []struct{ out, pkg string }{{gocryptfsBin, "."}, {xrayBin, "./gocryptfs-xray"}} {
		args := []string{"build", "-o", b.out, "-ldflags", ldflags}
		if tags := buildTags(); tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = projectRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s failed: %v\n%s", b.pkg, err, out)
			return 1
		}
	}
	return m.Run()
}

// result is the outcome of one program run.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// opts tweaks a run.
type opts struct {
	stdin string
	env   []string
}

// runBin runs a program. stdout and stderr go to files, not pipes: a
// daemonized mount inherits them and keeps them open, so waiting for EOF
// on a pipe would hang.
func runBin(t *testing.T, o opts, bin string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errF.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(o.stdin)
	cmd.Stdout, cmd.Stderr = outF, errF
	cmd.Env = append(os.Environ(), o.env...)
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s %q: %v", bin, args, err)
	}
	stdout, _ := os.ReadFile(outF.Name())
	stderr, _ := os.ReadFile(errF.Name())
	return result{stdout: string(stdout), stderr: string(stderr), code: code}
}

func gocryptfs(t *testing.T, args ...string) result {
	t.Helper()
	return runBin(t, opts{}, gocryptfsBin, args...)
}

// expect fails the test unless r has the exit code and every want string
// appears in its stdout or stderr.
func expect(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit code %d, got %v", code, r)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Fatalf("output does not contain %q: %v", w, r)
		}
	}
}

// initFS creates a fresh filesystem with password "test" and cheap scrypt.
func initFS(t *testing.T, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cipher")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-init", "-q", "-scryptn", "10", "-extpass", "echo " + testPassword}, extra...)
	expect(t, gocryptfs(t, append(args, dir)...), 0)
	return dir
}

// newDir returns a fresh empty directory.
func newDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireFuse skips the test when FUSE is unavailable.
func requireFuse(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("/dev/fuse not available:", err)
	}
}

// isMounted reports whether dir is a mount point.
func isMounted(dir string) bool {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == dir {
			return true
		}
	}
	return false
}

// mountsLine returns the /proc/self/mounts line of dir.
func mountsLine(dir string) string {
	data, _ := os.ReadFile("/proc/self/mounts")
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == dir {
			return l
		}
	}
	return ""
}

// unmount unmounts dir (lazily if it stays busy) and waits until it is
// gone.
func unmount(t *testing.T, dir string) {
	t.Helper()
	for i := 0; isMounted(dir); i++ {
		args := []string{"-u", dir}
		if i >= 20 {
			args = []string{"-u", "-z", dir}
		}
		exec.Command("fusermount3", args...).Run()
		if i > 40 {
			t.Errorf("could not unmount %s", dir)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mountFS mounts cipherdir (daemonized: gocryptfs returns once the mount is
// ready) and registers the unmount. It returns the mount point.
func mountFS(t *testing.T, cipherdir string, extra ...string) string {
	t.Helper()
	requireFuse(t)
	mnt := newDir(t, "mnt")
	args := append([]string{"-q", "-extpass", "echo " + testPassword}, extra...)
	r := gocryptfs(t, append(args, cipherdir, mnt)...)
	t.Cleanup(func() { unmount(t, mnt) })
	expect(t, r, 0)
	if !isMounted(mnt) {
		t.Fatalf("%s is not mounted after a successful mount: %v", mnt, r)
	}
	return mnt
}

// treeSum hashes names, types, modes, sizes, mtimes, contents, symlink
// targets and xattrs below dir: equal sums before and after a run prove
// that the run wrote nothing.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o %d %d %d.%d\n", p, st.Mode, st.Size, st.Nlink, st.Mtim.Sec, st.Mtim.Nsec)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		case d.Type()&fs.ModeSymlink != 0:
			s, _ := os.Readlink(p)
			fmt.Fprintln(h, s)
		}
		if d.Type().IsRegular() || d.IsDir() {
			buf := make([]byte, 64*1024)
			n, _ := unix.Llistxattr(p, buf)
			names := strings.Split(string(buf[:max(n, 0)]), "\x00")
			slices.Sort(names)
			for _, x := range names {
				if x == "" {
					continue
				}
				v := make([]byte, 64*1024)
				m, _ := unix.Lgetxattr(p, x, v)
				fmt.Fprintf(h, "%s=%x\n", x, v[:max(m, 0)])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// copyVector copies a reference vector to a writable temp dir and turns
// the flattened symlinks back into symlinks: in the vectors a symlink is
// stored as a regular file holding its (encrypted) target, which is
// printable text, while every content file starts with the binary header
// 00 02.
func copyVector(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(vectorsDir, name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		base := d.Name()
		meta := base == "gocryptfs.conf" || base == "gocryptfs.diriv" || strings.HasSuffix(base, ".name") ||
			base == ".gocryptfs.reverse.conf"
		if !meta && isText(data) {
			return os.Symlink(string(data), out)
		}
		mode := os.FileMode(0o644)
		if base == "gocryptfs.conf" {
			mode = 0o400
		}
		return os.WriteFile(out, data, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func isText(b []byte) bool {
	if len(b) == 0 || bytes.HasPrefix(b, []byte{0, 2}) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// xray runs gocryptfs-xray with stdin.
func xray(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runBin(t, opts{stdin: stdin}, xrayBin, args...)
}

// readUntil reads r until want appears (or EOF) and returns what it read;
// it fails the test after timeout.
func readUntil(t *testing.T, r io.Reader, want string, timeout time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil || bytes.Contains(got, []byte(want)) {
				ch <- string(got)
				return
			}
		}
	}()
	select {
	case s := <-ch:
		if !strings.Contains(s, want) {
			t.Fatalf("EOF while waiting for %q, got %q", want, s)
		}
		return s
	case <-time.After(timeout):
		t.Fatalf("timeout waiting for %q", want)
	}
	return ""
}
