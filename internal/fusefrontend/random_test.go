//go:build linux

package fusefrontend

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
)

// TestRandomDifferential applies the same long random sequence of
// operations to the mount and to a plain directory and compares the two
// trees after every step. CI runs a fixed seed and a bounded count;
// GOCRYPTFS_RANDOM_OPS=N runs N operations per variant (and
// GOCRYPTFS_RANDOM_SEED picks another seed).
func TestRandomDifferential(t *testing.T) {
	ops, seed := 250, uint64(1)
	if v := os.Getenv("GOCRYPTFS_RANDOM_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		ops = n
	}
	if v := os.Getenv("GOCRYPTFS_RANDOM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = n
	}
	cfgs := []struct {
		name string
		cfg  testConfig
	}{
		{"gcm", testConfig{}},
		{"xchacha-longnamemax62", testConfig{cipher: cryptocore.XChaCha20Poly1305, longNameMax: 62}},
		{"siv-plaintextnames", testConfig{cipher: cryptocore.AESSIV, plaintextNames: true}},
		{"gcm-writeback", testConfig{timeouts: true, writeback: true}},
	}
	for i, c := range cfgs {
		t.Run(c.name, func(t *testing.T) {
			tf := mountFS(t, c.cfg)
			d := &differ{t: t, a: tf.mnt, b: t.TempDir(), rng: rand.New(rand.NewPCG(seed, uint64(i)))}
			start := time.Now()
			counts := d.run(ops)
			t.Logf("seed %d: %d operations in %v: %v", seed, ops, time.Since(start).Round(time.Millisecond), counts)
		})
	}
}

// differ runs operations on two trees: a (the mount) and b (reference).
type differ struct {
	t       *testing.T
	a, b    string
	rng     *rand.Rand
	handles []handlePair
	step    int
	last    string
}

type handlePair struct {
	path string
	a, b *os.File
}

var randNames = []string{"f0", "f1", "f2", "f3", longName + "x", strings75()}

func strings75() string { return string(bytes.Repeat([]byte("m"), 75)) }

var randDirs = []string{"", "d0", "d1", "d0/" + longName}

func (d *differ) randPath() string {
	return filepath.Join(randDirs[d.rng.IntN(len(randDirs))], randNames[d.rng.IntN(len(randNames))])
}

// existingFile returns a random existing regular file of the reference
// tree, or "".
func (d *differ) existingFile() string {
	var files []string
	filepath.WalkDir(d.b, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			rel, _ := filepath.Rel(d.b, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) == 0 {
		return ""
	}
	return files[d.rng.IntN(len(files))]
}

func (d *differ) randData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(d.rng.Uint32())
	}
	// sometimes all zeros, which must not be mistaken for a hole
	if d.rng.IntN(8) == 0 {
		clear(b)
	}
	return b
}

// both runs fn on both trees and checks that the outcomes agree.
func (d *differ) both(what string, fn func(root string) error) {
	d.t.Helper()
	ea := fn(d.a)
	eb := fn(d.b)
	d.last = what
	if errnoOf(ea) != errnoOf(eb) {
		d.t.Fatalf("step %d %s: mount: %v, reference: %v", d.step, what, ea, eb)
	}
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 1 << 20
}

func (d *differ) run(n int) map[string]int {
	counts := map[string]int{}
	for _, dir := range randDirs[1:] {
		d.both("mkdir "+dir, func(r string) error { return os.Mkdir(filepath.Join(r, dir), 0o755) })
	}
	for d.step = 0; d.step < n; d.step++ {
		op := d.rng.IntN(15)
		name := d.doOp(op)
		counts[name]++
		d.compare()
	}
	for _, h := range d.handles {
		h.a.Close()
		h.b.Close()
	}
	return counts
}

func (d *differ) doOp(op int) string {
	switch op {
	case 0, 1, 2: // write at a random offset, creating the file if needed
		p := d.randPath()
		off := int64(d.rng.IntN(70000))
		data := d.randData(d.rng.IntN(20000))
		d.both(fmt.Sprintf("write %s @%d+%d", p, off, len(data)), func(r string) error {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(data, off)
			return err
		})
		return "write"
	case 3: // truncate to a random size
		p := d.randPath()
		size := int64(d.rng.IntN(80000))
		d.both(fmt.Sprintf("truncate %s %d", p, size), func(r string) error { return os.Truncate(filepath.Join(r, p), size) })
		return "truncate"
	case 4: // punch a hole: truncate down, then up
		p := d.existingFile()
		if p == "" {
			return "noop"
		}
		st, _ := os.Stat(filepath.Join(d.b, p))
		down := st.Size() / int64(1+d.rng.IntN(4))
		up := st.Size() + int64(d.rng.IntN(30000))
		d.both(fmt.Sprintf("hole %s %d->%d", p, down, up), func(r string) error {
			if err := os.Truncate(filepath.Join(r, p), down); err != nil {
				return err
			}
			return os.Truncate(filepath.Join(r, p), up)
		})
		return "hole"
	case 5: // rename onto a random name (maybe replacing, maybe across dirs)
		src := d.existingFile()
		if src == "" {
			return "noop"
		}
		dst := d.randPath()
		d.both("rename "+src+" -> "+dst, func(r string) error {
			return unix.Rename(filepath.Join(r, src), filepath.Join(r, dst))
		})
		return "rename"
	case 6: // hard link
		src := d.existingFile()
		if src == "" {
			return "noop"
		}
		dst := d.randPath()
		d.both("link "+src+" -> "+dst, func(r string) error { return os.Link(filepath.Join(r, src), filepath.Join(r, dst)) })
		return "link"
	case 7: // unlink
		p := d.randPath()
		d.both("unlink "+p, func(r string) error { return unix.Unlink(filepath.Join(r, p)) })
		return "unlink"
	case 8: // append
		p := d.randPath()
		data := d.randData(d.rng.IntN(6000))
		d.both("append "+p, func(r string) error {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write(data)
			return err
		})
		return "append"
	case 9: // keep a handle open across later operations
		p := d.existingFile()
		if p == "" || len(d.handles) >= 3 {
			return "noop"
		}
		fa, ea := os.OpenFile(filepath.Join(d.a, p), os.O_RDWR, 0)
		fb, eb := os.OpenFile(filepath.Join(d.b, p), os.O_RDWR, 0)
		if errnoOf(ea) != errnoOf(eb) {
			d.t.Fatalf("step %d open %s: %v vs %v", d.step, p, ea, eb)
		}
		if ea == nil {
			d.handles = append(d.handles, handlePair{p, fa, fb})
		}
		return "open"
	case 10: // write or truncate through a held handle (file may be renamed or unlinked by now)
		if len(d.handles) == 0 {
			return "noop"
		}
		h := d.handles[d.rng.IntN(len(d.handles))]
		off := int64(d.rng.IntN(50000))
		data := d.randData(d.rng.IntN(9000))
		if d.rng.IntN(3) == 0 {
			size := int64(d.rng.IntN(60000))
			ea, eb := h.a.Truncate(size), h.b.Truncate(size)
			if errnoOf(ea) != errnoOf(eb) {
				d.t.Fatalf("step %d ftruncate: %v vs %v", d.step, ea, eb)
			}
			return "ftruncate"
		}
		_, ea := h.a.WriteAt(data, off)
		_, eb := h.b.WriteAt(data, off)
		if errnoOf(ea) != errnoOf(eb) {
			d.t.Fatalf("step %d handle write: %v vs %v", d.step, ea, eb)
		}
		// read back through the handles too
		ba, bb := make([]byte, 70000), make([]byte, 70000)
		na, _ := h.a.ReadAt(ba, 0)
		nb, _ := h.b.ReadAt(bb, 0)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			d.t.Fatalf("step %d: handle read differs (%d vs %d bytes)", d.step, na, nb)
		}
		return "handlewrite"
	case 11: // close a held handle
		if len(d.handles) == 0 {
			return "noop"
		}
		i := d.rng.IntN(len(d.handles))
		d.handles[i].a.Close()
		d.handles[i].b.Close()
		d.handles = slices.Delete(d.handles, i, i+1)
		return "close"
	case 12: // mkdir / rmdir of a scratch directory
		p := filepath.Join(randDirs[d.rng.IntN(len(randDirs))], "sub")
		if d.rng.IntN(2) == 0 {
			d.both("mkdir "+p, func(r string) error { return os.Mkdir(filepath.Join(r, p), 0o755) })
			return "mkdir"
		}
		d.both("rmdir "+p, func(r string) error { return unix.Rmdir(filepath.Join(r, p)) })
		return "rmdir"
	case 14: // symlink with a random target
		p := d.randPath()
		target := string(d.randData(1 + d.rng.IntN(300)))
		target = strings.Map(func(r rune) rune {
			// no '/': writes through the link must stay inside the tree
			if r == 0 || r == '/' || r >= 0x80 {
				return 'x'
			}
			return r
		}, target)
		d.both("symlink "+p, func(r string) error { return os.Symlink(target, filepath.Join(r, p)) })
		return "symlink"
	default: // chmod
		p := d.randPath()
		mode := os.FileMode(0o600 + d.rng.IntN(0o100))
		d.both("chmod "+p, func(r string) error { return os.Chmod(filepath.Join(r, p), mode) })
		return "chmod"
	}
}

// compare checks that both trees hold the same names, types, modes, link
// counts, sizes and contents.
func (d *differ) compare() {
	d.t.Helper()
	la, lb := d.walk(d.a), d.walk(d.b)
	if !slices.Equal(la, lb) {
		d.t.Fatalf("step %d (after %s): trees differ:\nmount:     %q\nreference: %q", d.step, d.last, la, lb)
	}
}

func (d *differ) walk(root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		line := fmt.Sprintf("%s %o nlink=%d", rel, st.Mode, st.Nlink)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			line = fmt.Sprintf("%s %o", rel, st.Mode)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" size=%d -> %q", st.Size, target)
		}
		if e.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" size=%d/%d sum=%x", st.Size, len(b), checksum(b))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		d.t.Fatalf("step %d (after %s): walk %s: %v", d.step, d.last, root, err)
	}
	return out
}

func checksum(b []byte) uint64 {
	var h uint64 = 1469598103934665603
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
