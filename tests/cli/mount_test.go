package cli_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

func TestMountErrors(t *testing.T) {
	testutil.RequireFuse(t)
	good := initFS(t)

	damaged := initFS(t)
	conf := filepath.Join(damaged, "gocryptfs.conf")
	os.Chmod(conf, 0o600)
	data, _ := os.ReadFile(conf)
	os.WriteFile(conf, data[:len(data)/2], 0o600)

	unknownFlag := initFS(t)
	conf = filepath.Join(unknownFlag, "gocryptfs.conf")
	os.Chmod(conf, 0o600)
	data, _ = os.ReadFile(conf)
	os.WriteFile(conf, []byte(strings.Replace(string(data), `"Raw64"`, `"Raw64", "FooBar"`, 1)), 0o600)

	noConf := newDir(t)
	nonEmptyMnt := newDir(t)
	os.WriteFile(filepath.Join(nonEmptyMnt, "x"), nil, 0o600)
	inside := filepath.Join(good, "sub")
	os.Mkdir(inside, 0o700)

	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"wrong password", []string{"-extpass", "echo wrong", good, "MNT"}, 12, []string{"Password incorrect."}},
		{"wrong password fg", []string{"-fg", "-passfile", passfile(t, "nope"), good, "MNT"}, 12, []string{"Password incorrect."}},
		{"damaged config", []string{"-extpass", "echo test", damaged, "MNT"}, 11, []string{"Cannot open config file"}},
		{"missing config", []string{"-extpass", "echo test", noConf, "MNT"}, 11, []string{"Cannot open config file"}},
		{"unknown feature flag", []string{"-extpass", "echo test", unknownFlag, "MNT"}, 27, []string{"FooBar"}},
		{"non-empty mountpoint", []string{"-extpass", "echo test", good, nonEmptyMnt}, 10, nil},
		{"missing mountpoint", []string{"-extpass", "echo test", good, filepath.Join(nonEmptyMnt, "nope")}, 10, nil},
		{"mountpoint is cipherdir", []string{"-extpass", "echo test", "-nonempty", good, good}, 10, []string{"shadow"}},
		{"mountpoint is parent", []string{"-extpass", "echo test", "-nonempty", good, filepath.Dir(good)}, 10, []string{"shadow"}},
		{"mountpoint inside cipherdir", []string{"-extpass", "echo test", good, inside}, 10, []string{"contained in cipherdir"}},
		{"missing cipherdir", []string{"-extpass", "echo test", filepath.Join(noConf, "nope"), "MNT"}, 6, nil},
		{"bad masterkey", []string{"-masterkey", "1234", good, "MNT"}, 14, nil},
		{"empty password", []string{"-passfile", passfile(t, ""), good, "MNT"}, 9, nil},
		{"endless passfile", []string{"-fg", "-passfile", "/dev/zero", good, "MNT"}, 9, []string{"password is too long"}},
		{"too long password", []string{"-passfile", passfile(t, strings.Repeat("x", 2049)), good, "MNT"}, 9, []string{"password is too long"}},
		{"reverse without reverse config", []string{"-reverse", "-extpass", "echo test", good, "MNT"}, 11, []string{"Cannot open config file"}},
		{"reverse with a non-SIV config", []string{"-reverse", "-extpass", "echo test", "-config", filepath.Join(good, "gocryptfs.conf"), good, "MNT"}, 1, []string{"AES-SIV"}},
		{"fuse mount fails", []string{"-fg", "-extpass", "echo test", good, "/dev/fd/99"}, 19, []string{"fs.Mount failed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mnt := newDir(t)
			for i, a := range c.args {
				if a == "MNT" {
					c.args[i] = mnt
				}
			}
			r := run(t, c.args...)
			if testutil.IsMounted(mnt) {
				testutil.UnmountDir(t, mnt)
				t.Fatal("mounted despite the error")
			}
			testutil.Expect(t, r, c.code, c.want...)
		})
	}
}

func TestMountReadWrite(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	line := testutil.MountLine(mnt)
	for _, w := range []string{dir + " ", " fuse.gocryptfs ", "rw", "nosuid", "nodev", "max_read=1048576"} {
		if !strings.Contains(line, w) {
			t.Errorf("mount line %q lacks %q", line, w)
		}
	}
	big := make([]byte, 3<<20+123)
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(mnt, "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(mnt, "big"))
	if err != nil || string(got) != string(big) {
		t.Fatalf("read back failed: %v", err)
	}
	// umask 0 in the filesystem process: modes come from the request.
	if err := os.Mkdir(filepath.Join(mnt, "d"), 0o777); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(mnt, "d"))
	if fi.Mode().Perm() != 0o777&^currentUmask() {
		t.Errorf("mkdir mode %v", fi.Mode())
	}
}

func currentUmask() os.FileMode {
	u := syscall.Umask(0)
	syscall.Umask(u)
	return os.FileMode(u)
}

func TestMountOptionForms(t *testing.T) {
	dir := initFS(t)
	pf := passfile(t, "test")
	cases := []struct {
		name   string
		args   []string
		ro     bool
		inLine []string
	}{
		{"-o at end", []string{dir, "MNT", "-o", "passfile=" + pf + ",ro"}, true, nil},
		{"-o at start", []string{"-o", "passfile=" + pf, dir, "MNT"}, false, nil},
		{"-o= attached", []string{dir, "-o=passfile=" + pf + ",q", "MNT"}, false, nil},
		{"-o last wins", []string{"-o", "ro", dir, "MNT", "-o", "passfile=" + pf}, false, nil},
		{"double dash flags", []string{"--passfile=" + pf, "--ro", dir, "MNT"}, true, nil},
		{"ko and fsname", []string{"-passfile", pf, "-ko", "noatime", "-fsname", "my,fs", dir, "MNT"}, false, []string{"my_fs ", "noatime"}},
		{"fstab style", []string{dir, "MNT", "-o", "nofail,passfile=" + pf + ",dev,suid,rw"}, false, []string{"rw,", "relatime"}},
		{"noexec", []string{"-passfile", pf, "-noexec", dir, "MNT"}, false, []string{"noexec"}},
		{"double dash ends options", []string{"-passfile", pf, "--", dir, "MNT"}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testutil.RequireFuse(t)
			mnt := newDir(t)
			for i, a := range c.args {
				if a == "MNT" {
					c.args[i] = mnt
				}
			}
			r := run(t, c.args...)
			t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
			testutil.Expect(t, r, 0)
			line := testutil.MountLine(mnt)
			opts := strings.Fields(line)[3]
			if isRO := strings.HasPrefix(opts, "ro"); isRO != c.ro {
				t.Errorf("ro=%v, want %v: %s", isRO, c.ro, line)
			}
			for _, w := range c.inLine {
				if !strings.Contains(line, w) {
					t.Errorf("mount line %q lacks %q", line, w)
				}
			}
			err := os.WriteFile(filepath.Join(mnt, "f"), []byte("x"), 0o600)
			if c.ro != (err != nil) {
				t.Errorf("write: %v (ro=%v)", err, c.ro)
			}
		})
	}
}

// TestMountKernelOnlyOptions: -ko options that fusermount3 refuses
// (nodiratime, strictatime, nosymfollow, lazytime; issue 21) mount
// anyway: they are set on the mount afterwards, show in the mount table
// and take effect.
func TestMountKernelOnlyOptions(t *testing.T) {
	dir := initFS(t)
	for _, c := range []struct {
		ko            string
		inLine, notIn []string
	}{
		{"nodiratime", []string{",nodiratime,", ",relatime,"}, []string{",noatime,"}},
		{"strictatime,nodiratime", []string{",nodiratime,"}, []string{",relatime,", ",noatime,"}},
		{"noatime,strictatime", nil, []string{",relatime,", ",noatime,"}},
		{"strictatime,noatime", []string{",noatime,"}, []string{",relatime,"}},
		{"nosymfollow,lazytime,noexec", []string{",nosymfollow,", ",lazytime,", ",noexec,"}, nil},
	} {
		t.Run(c.ko, func(t *testing.T) {
			mnt := mountFS(t, dir, "-extpass", "echo test", "-ko", c.ko)
			line := "," + strings.Fields(testutil.MountLine(mnt))[3] + "," // the options
			for _, w := range c.inLine {
				if !strings.Contains(line, w) {
					t.Errorf("mount line %q lacks %q", line, w)
				}
			}
			for _, w := range c.notIn {
				if strings.Contains(line, w) {
					t.Errorf("mount line %q has %q", line, w)
				}
			}
			if !strings.Contains(c.ko, "nosymfollow") {
				return
			}
			// nosymfollow: symlinks are read but not followed.
			if err := os.WriteFile(filepath.Join(mnt, "target"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("target", filepath.Join(mnt, "link")); err != nil {
				t.Fatal(err)
			}
			if _, err := os.ReadFile(filepath.Join(mnt, "link")); !errors.Is(err, syscall.ELOOP) {
				t.Errorf("following a symlink under nosymfollow: %v, want ELOOP", err)
			}
			if target, err := os.Readlink(filepath.Join(mnt, "link")); err != nil || target != "target" {
				t.Errorf("readlink: %q, %v", target, err)
			}
		})
	}
}

func TestForceOwner(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test", "-force_owner", "1234:5678")
	os.WriteFile(filepath.Join(mnt, "f"), nil, 0o644)
	fi, err := os.Stat(filepath.Join(mnt, "f"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1234 || st.Gid != 5678 {
		t.Errorf("owner %d:%d", st.Uid, st.Gid)
	}
	if line := testutil.MountLine(mnt); !strings.Contains(line, "allow_other") || !strings.Contains(line, "default_permissions") {
		t.Errorf("-force_owner must imply -allow_other: %s", line)
	}
}

// TestDaemon: the default mode returns only once the filesystem is
// mounted, and "fusermount -u" ends the background process with exit 0.
func TestDaemon(t *testing.T) {
	dir := initFS(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	pid := daemonPid(t, mnt)
	if pid == 0 {
		t.Fatal("background process not found")
	}
	if cwd, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); cwd != "/" {
		t.Errorf("daemon cwd %q, want /", cwd)
	}
	if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
		t.Fatalf("fusermount -u: %v %s", err, out)
	}
	if !testutil.WaitFor(5*time.Second, func() bool { return processGone(pid) }) {
		t.Error("background process still running after fusermount -u")
	}
}

// startFg mounts a fresh filesystem with -fg and waits until it says
// that the mount is ready (fs.Mount has returned: an unmount before that
// is a failed mount, exit 19). It returns the running process, the mount
// point and a function that reads the output so far (a file, which the
// test may read while the process writes). The mount and the process are
// cleaned up.
func startFg(t *testing.T) (*exec.Cmd, string, func() string) {
	t.Helper()
	mnt := newDir(t)
	cmd, output := startFgArgs(t, initFS(t), mnt)
	return cmd, mnt, output
}

// TestForegroundSignal: a -fg mount unmounts on SIGTERM/SIGINT and exits 15.
func TestForegroundSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, mnt, output := startFg(t)
			cmd.Process.Signal(sig)
			err := testutil.WaitExit(cmd, 20*time.Second)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 15 {
				t.Fatalf("exit status %v, want 15; output:\n%s", err, output())
			}
			if testutil.IsMounted(mnt) {
				t.Error("still mounted after the signal")
			}
		})
	}
}

// TestIdle: -idle unmounts an unused filesystem, but not while a file is
// open; in forward and in reverse mode.
func TestIdle(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			var mnt, name string
			if reverse {
				plain := newDir(t)
				if err := os.WriteFile(filepath.Join(plain, "f"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				testutil.Expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)
				mnt = mountFS(t, plain, "-reverse", "-extpass", "echo test", "-i", "1s")
				name = "gocryptfs.conf"
			} else {
				mnt = mountFS(t, initFS(t), "-extpass", "echo test", "-i", "1s")
				name = "open"
				if err := os.WriteFile(filepath.Join(mnt, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := os.Open(filepath.Join(mnt, name))
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond)
			if !testutil.IsMounted(mnt) {
				t.Fatal("unmounted although a file was open")
			}
			f.Close()
			if !testutil.WaitFor(6*time.Second, func() bool { return !testutil.IsMounted(mnt) }) {
				t.Fatal("idle filesystem was not unmounted")
			}
		})
	}
}

// TestFgExternalUnmount: a -fg mount exits 0 when unmounted from outside.
func TestFgExternalUnmount(t *testing.T) {
	cmd, mnt, output := startFg(t)
	if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if err := testutil.WaitExit(cmd, 20*time.Second); err != nil {
		t.Fatalf("exit status %v, want 0; output:\n%s", err, output())
	}
}

// TestRootInode: the mount's root shows the inode number of the directory
// it shows (CIPHERDIR, or PLAINDIR in reverse mode), never 0, which
// programs take for a deleted entry (issue 21); getdents agrees with stat
// for the root's "." and a subdirectory's "..".
func TestRootInode(t *testing.T) {
	ino := func(p string) uint64 {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	// dotIno is the inode number getdents gives for name in dir.
	dotIno := func(dir, name string) uint64 {
		t.Helper()
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		buf := make([]byte, 1<<16)
		n, err := syscall.ReadDirent(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino, off, reclen, type, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if nameOf(b[19:reclen]) == name {
				return binary.NativeEndian.Uint64(b)
			}
			b = b[reclen:]
		}
		t.Fatalf("%s: no %q entry", dir, name)
		return 0
	}
	check := func(t *testing.T, backing, mnt, sub string) {
		want := ino(backing)
		if got := ino(mnt); got != want || got == 0 {
			t.Errorf("root inode %d, want %d (the backing root's)", got, want)
		}
		if got := dotIno(mnt, "."); got != want {
			t.Errorf("root's . has inode %d, want %d", got, want)
		}
		if got := dotIno(sub, ".."); got != want {
			t.Errorf("%s/.. has inode %d, want %d", sub, got, want)
		}
	}
	t.Run("forward", func(t *testing.T) {
		dir := initFS(t)
		mnt := mountFS(t, dir, "-extpass", "echo test")
		if err := os.Mkdir(filepath.Join(mnt, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		check(t, dir, mnt, filepath.Join(mnt, "d"))
	})
	t.Run("reverse", func(t *testing.T) {
		plain := initFS(t, "-reverse")
		if err := os.Mkdir(filepath.Join(plain, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		view := mountFS(t, plain, "-reverse", "-extpass", "echo test")
		ents, err := os.ReadDir(view)
		if err != nil {
			t.Fatal(err)
		}
		var sub string
		for _, e := range ents {
			if e.IsDir() {
				sub = filepath.Join(view, e.Name())
			}
		}
		if sub == "" {
			t.Fatal("encrypted subdirectory not listed")
		}
		check(t, plain, view, sub)
	})
}

// nameOf is the NUL-terminated name at the start of b.
func nameOf(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
