//go:build linux

package fusefrontend

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// treeSnapshot describes every entry below root (also root itself) by
// everything an operation could change: type and mode, owner, size,
// mtime/ctime, content hash, symlink target and extended attributes.
func treeSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := make(map[string]string)
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		desc := fmt.Sprintf("mode=%o uid=%d gid=%d size=%d mtime=%d.%d ctime=%d.%d",
			st.Mode, st.Uid, st.Gid, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" sha=%x", sha256.Sum256(b))
		case unix.S_IFLNK:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " target=" + l
		}
		buf := make([]byte, 4096)
		if n, err := unix.Llistxattr(p, buf); err == nil {
			names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
			slices.Sort(names)
			desc += " xattrs=" + strings.Join(names, ",")
		}
		rel, _ := filepath.Rel(root, p)
		snap[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed: "+k)
		} else if v != w {
			d = append(d, fmt.Sprintf("changed: %s\n  before %s\n  after  %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "created: "+k)
		}
	}
	slices.Sort(d)
	return d
}

// TestSymlinkSwapAttack plays a user with write access to CIPHERDIR who
// keeps replacing a backing directory (at two depths) by a symlink to a
// directory outside CIPHERDIR while the mount serves a stream of
// operations below it. The outside directories are copies of the real
// backing directories taken while a file held "SECRET", so any operation
// that followed the symlink would find valid ciphertext to act on. Nothing
// outside may be read, written, chmodded, chowned, touched, or deleted.
func TestSymlinkSwapAttack(t *testing.T) {
	for _, v := range []struct {
		name string
		cfg  testConfig
	}{
		{"dircache", testConfig{}},
		{"sharedstorage", testConfig{args: Args{SharedStorage: true}}},
		{"timeouts", testConfig{timeouts: true}},
	} {
		t.Run(v.name, func(t *testing.T) { symlinkSwapAttack(t, v.cfg) })
	}
}

func symlinkSwapAttack(t *testing.T, cfg testConfig) {
	tf := mountFS(t, cfg)
	const secret = "SECRET-DATA"
	sub := tf.path("d/sub")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The canaries exist only in the copy outside: listing or finding
	// them means the mount looked outside CIPHERDIR.
	for _, n := range []string{"f", longName, "x/inner", "canary", "../canary"} {
		mustWrite(t, filepath.Join(sub, n), []byte(secret))
	}
	cD, err := tf.rn.EncryptPath("d")
	if err != nil {
		t.Fatal(err)
	}
	cSub, err := tf.rn.EncryptPath("d/sub")
	if err != nil {
		t.Fatal(err)
	}
	// outside/d is a copy of the backing d (including sub) while the
	// files hold the secret.
	outside := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Join(tf.cipher, cD), filepath.Join(outside, "d")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	for _, n := range []string{"f", longName, "x/inner"} {
		mustWrite(t, filepath.Join(sub, n), []byte("public"))
	}
	for _, n := range []string{"canary", "../canary"} {
		if err := os.Remove(filepath.Join(sub, n)); err != nil {
			t.Fatal(err)
		}
	}
	before := treeSnapshot(t, outside)

	realD := filepath.Join(tf.cipher, cD)
	realSub := filepath.Join(tf.cipher, cSub)
	swaps := []struct{ real, target string }{
		{realD, filepath.Join(outside, "d")},
		{realSub, filepath.Join(outside, "d", filepath.Base(cSub))},
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var swapCount atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			s := swaps[i%2]
			aside := s.real + ".aside"
			if os.Rename(s.real, aside) != nil {
				continue
			}
			if os.Symlink(s.target, s.real) == nil {
				swapCount.Add(1)
				time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				os.Remove(s.real)
			}
			if err := os.Rename(aside, s.real); err != nil {
				t.Errorf("attacker could not restore %s: %v", s.real, err)
				return
			}
		}
	}()

	var leaked atomic.Value
	var okOps atomic.Int64
	check := func(what string, b []byte, err error) {
		if err == nil {
			okOps.Add(1)
		}
		if bytes.Contains(b, []byte(secret)) {
			leaked.Store(what)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		f := filepath.Join(sub, "f")
		l := filepath.Join(sub, longName)
		in := filepath.Join(sub, "x", "inner")
		for _, p := range []string{f, l, in} {
			b, err := os.ReadFile(p)
			check("read "+p, b, err)
		}
		check("write", nil, os.WriteFile(f, []byte("public"), 0o644))
		check("chmod", nil, os.Chmod(f, os.FileMode(0o600|i%2*0o44)))
		check("chown", nil, os.Lchown(l, os.Getuid(), 1000+i%2))
		check("utimes", nil, os.Chtimes(in, time.Unix(int64(i), 0), time.Unix(int64(i), 0)))
		check("truncate", nil, os.Truncate(l, 6))
		check("setxattr", nil, unix.Setxattr(f, "user.attack", []byte("v"), 0))
		check("removexattr", nil, unix.Removexattr(f, "user.attack"))
		xb := make([]byte, 256)
		_, err := unix.Getxattr(in, "user.attack", xb)
		check("getxattr", nil, err)
		n := filepath.Join(sub, fmt.Sprintf("new%d", i%4))
		check("create", nil, os.WriteFile(n, []byte("x"), 0o644))
		check("rename", nil, os.Rename(n, n+"r"))
		check("unlink", nil, os.Remove(n+"r"))
		check("mkdir", nil, os.Mkdir(n+"d", 0o700))
		check("rmdir", nil, os.Remove(n+"d"))
		check("symlink", nil, os.Symlink("t", n+"s"))
		check("unlink symlink", nil, os.Remove(n+"s"))
		check("link", nil, os.Link(f, n+"h"))
		check("unlink link", nil, os.Remove(n+"h"))
		check("mkfifo", nil, unix.Mkfifo(n+"p", 0o600))
		check("unlink fifo", nil, os.Remove(n+"p"))
		// A long name: its .name file is created and removed too.
		check("rename long", nil, os.Rename(l, l[:len(l)-1]+"M"))
		check("rename long back", nil, os.Rename(l[:len(l)-1]+"M", l))
		for _, dir := range []string{sub, filepath.Dir(sub)} {
			ents, err := os.ReadDir(dir)
			check("readdir", nil, err)
			for _, e := range ents {
				if e.Name() == "canary" {
					leaked.Store("readdir " + dir)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, "canary")); err == nil {
				leaked.Store("lookup in " + dir)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if w := leaked.Load(); w != nil {
		t.Errorf("secret content served by %v", w)
	}
	if d := diffSnapshots(before, treeSnapshot(t, outside)); len(d) > 0 {
		t.Errorf("the directory outside CIPHERDIR was modified:\n%s", strings.Join(d, "\n"))
	}
	t.Logf("%d swaps, %d successful operations", swapCount.Load(), okOps.Load())
	if swapCount.Load() == 0 || okOps.Load() == 0 {
		t.Fatalf("attack did not run: %d swaps, %d successful operations", swapCount.Load(), okOps.Load())
	}
}

// TestLeafSymlinkSwap replaces the backing file of a plaintext regular file
// (still cached by the kernel as a regular file) by a symlink to a file
// outside CIPHERDIR that holds valid ciphertext: no operation on the
// plaintext file may read, write, chmod, chown, touch, truncate or set
// attributes of the outside file.
func TestLeafSymlinkSwap(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true})
	const secret = "SECRET-DATA"
	p := tf.path("f")
	mustWrite(t, p, []byte(secret))
	c, err := tf.rn.EncryptPath("f")
	if err != nil {
		t.Fatal(err)
	}
	backing := filepath.Join(tf.cipher, c)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.Rename(backing, victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, backing); err != nil {
		t.Fatal(err)
	}
	before := treeSnapshot(t, outside)
	ops := []struct {
		name string
		fn   func() ([]byte, error)
	}{
		{"read", func() ([]byte, error) { return os.ReadFile(p) }},
		{"write", func() ([]byte, error) { return nil, os.WriteFile(p, []byte("x"), 0o644) }},
		{"append", func() ([]byte, error) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				f.Write([]byte("x"))
				f.Close()
			}
			return nil, err
		}},
		{"chmod", func() ([]byte, error) { return nil, os.Chmod(p, 0o600) }},
		{"chown", func() ([]byte, error) { return nil, os.Chown(p, os.Getuid(), 1234) }},
		{"utimes", func() ([]byte, error) { return nil, os.Chtimes(p, time.Unix(1, 0), time.Unix(1, 0)) }},
		{"truncate", func() ([]byte, error) { return nil, os.Truncate(p, 1) }},
		{"setxattr", func() ([]byte, error) { return nil, unix.Setxattr(p, "user.x", []byte("v"), 0) }},
		{"getxattr", func() ([]byte, error) {
			b := make([]byte, 100)
			n, err := unix.Getxattr(p, "user.x", b)
			if n < 0 {
				n = 0
			}
			return b[:n], err
		}},
	}
	for _, op := range ops {
		b, _ := op.fn()
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s returned the outside file's contents", op.name)
		}
		if d := diffSnapshots(before, treeSnapshot(t, outside)); len(d) > 0 {
			t.Fatalf("%s modified the file outside CIPHERDIR:\n%s", op.name, strings.Join(d, "\n"))
		}
	}
}
