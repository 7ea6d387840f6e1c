package fusefrontend_reverse

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
	"gocryptfs/internal/testutil"
)

// treeGen builds a random plaintext tree from a fixed seed.
type treeGen struct {
	t    testing.TB
	rng  *rand.Rand
	root string
	// files lists regular files (relative paths), for hard links.
	files []string
	// hardlinks lists groups of paths that are links of one file.
	hardlinks [][]string
}

// nameRunes are the characters random names are made of: ASCII, some
// punctuation that has special meaning elsewhere, and multi-byte UTF-8.
var nameRunes = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.+()[]{}#!~äöüßéあ字🙂")

func (g *treeGen) name() string {
	var maxLen int
	switch g.rng.IntN(4) {
	case 0: // long: hashed with the default threshold (> 175 bytes)
		maxLen = 176 + g.rng.IntN(80)
	default:
		maxLen = 1 + g.rng.IntN(40)
	}
	var b strings.Builder
	for b.Len() < maxLen {
		r := nameRunes[g.rng.IntN(len(nameRunes))]
		if b.Len()+len(string(r)) > maxLen {
			if b.Len() == 0 {
				continue
			}
			break
		}
		b.WriteRune(r)
	}
	s := b.String()
	if s == "." || s == ".." || strings.HasPrefix(s, ReverseConfName) {
		return g.name()
	}
	return s
}

func (g *treeGen) data() []byte {
	sizes := []int{0, 1, 17, 4095, 4096, 4097, 8192, 10000}
	var n int
	if g.rng.IntN(3) == 0 {
		n = g.rng.IntN(300 * 1024)
	} else {
		n = sizes[g.rng.IntN(len(sizes))]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	return b
}

// fill creates a random directory tree below dir (relative path rel) with
// depth levels of subdirectories.
func (g *treeGen) fill(rel string, depth int) {
	t := g.t
	dir := filepath.Join(g.root, rel)
	n := 4 + g.rng.IntN(7)
	for range n {
		name := g.name()
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		r := filepath.Join(rel, name)
		switch k := g.rng.IntN(10); {
		case k < 4:
			if err := os.WriteFile(p, g.data(), 0o640); err != nil {
				t.Fatal(err)
			}
			g.files = append(g.files, r)
			g.xattrs(p)
		case k < 5:
			// Sparse: a hole, some data, another hole up to the size.
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(100000 + g.rng.IntN(3000000))
			off := int64(g.rng.IntN(int(size)))
			if _, err := f.WriteAt([]byte("sparse data"), off); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			f.Close()
			g.files = append(g.files, r)
		case k < 7:
			targets := []string{"target", "../x/y", "/absolute/path/" + name, strings.Repeat("t", 1+g.rng.IntN(2000))}
			if err := os.Symlink(targets[g.rng.IntN(len(targets))], p); err != nil {
				t.Fatal(err)
			}
		default:
			if depth == 0 {
				continue
			}
			if err := os.Mkdir(p, 0o750); err != nil {
				t.Fatal(err)
			}
			g.xattrs(p)
			g.fill(r, depth-1)
		}
	}
}

func (g *treeGen) xattrs(p string) {
	for i := range g.rng.IntN(3) {
		v := make([]byte, g.rng.IntN(100))
		for j := range v {
			v[j] = byte(g.rng.Uint32())
		}
		if err := unix.Lsetxattr(p, fmt.Sprintf("user.attr%d", i), v, 0); err != nil {
			g.t.Fatal(err)
		}
	}
}

// makeRandomTree builds the plaintext tree of the round-trip tests, with
// some fixed entries besides the random ones: reserved-looking names, a
// fifo, hard links, and paths that the exclusion options hide.
func makeRandomTree(t testing.TB, seed uint64, withConfNames bool) *treeGen {
	g := &treeGen{t: t, rng: rand.New(rand.NewPCG(seed, 42)), root: t.TempDir()}
	g.fill("", 3)
	mustWriteFile(t, filepath.Join(g.root, ReverseConfName), []byte("reverse config bytes"))
	mustMkdir(t, filepath.Join(g.root, "sub"))
	mustWriteFile(t, filepath.Join(g.root, "sub", "gocryptfs.conf"), []byte("not a config"))
	mustWriteFile(t, filepath.Join(g.root, "sub", "gocryptfs.diriv"), []byte("not a diriv"))
	if withConfNames {
		mustWriteFile(t, filepath.Join(g.root, "gocryptfs.diriv"), []byte("plaintext diriv"))
	}
	if err := unix.Mkfifo(filepath.Join(g.root, "sub", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Hard links: one group within a directory, one across directories,
	// one with a long name.
	mustWriteFile(t, filepath.Join(g.root, "hl-a"), bytes.Repeat([]byte("hard link "), 1000))
	long := strings.Repeat("H", 200)
	for _, l := range []string{"sub/hl-b", "hl-c", "sub/" + long} {
		if err := os.Link(filepath.Join(g.root, "hl-a"), filepath.Join(g.root, l)); err != nil {
			t.Fatal(err)
		}
	}
	g.hardlinks = append(g.hardlinks, []string{"hl-a", "sub/hl-b", "hl-c", "sub/" + long})
	// Excluded: a literal directory, a wildcard, patterns from a file.
	mustMkdir(t, filepath.Join(g.root, "excluded-dir"))
	mustWriteFile(t, filepath.Join(g.root, "excluded-dir", "secret"), []byte("secret"))
	mustWriteFile(t, filepath.Join(g.root, "sub", "scratch.tmp"), []byte("tmp"))
	mustWriteFile(t, filepath.Join(g.root, "keep.tmp"), []byte("kept by negation"))
	mustMkdir(t, filepath.Join(g.root, "sub", "cache"))
	mustWriteFile(t, filepath.Join(g.root, "sub", "cache", "c"), []byte("cached"))
	mustWriteFile(t, filepath.Join(g.root, "cache"), []byte("a file called cache is not a cache/ dir"))
	return g
}

// roundTripExcludes returns exclusion options matching makeRandomTree and
// whether a plaintext path is excluded by them.
func roundTripExcludes(t testing.TB) (Args, func(rel string) bool) {
	from := filepath.Join(t.TempDir(), "patterns")
	mustWriteFile(t, from, []byte("# gitignore syntax\ncache/\n!keep.tmp\n"))
	args := Args{Excludes: []string{"excluded-dir"}, ExcludeWildcards: []string{"*.tmp"}, ExcludeFrom: []string{from}}
	isExcluded := func(rel string) bool {
		return rel == "excluded-dir" || strings.HasPrefix(rel, "excluded-dir/") ||
			rel == "sub/scratch.tmp" || rel == "sub/cache" || strings.HasPrefix(rel, "sub/cache/")
	}
	return args, isExcluded
}

func mustWriteFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// entrySnap is everything the view shows about one entry.
type entrySnap struct {
	mode    uint32
	size    int64
	ino     uint64
	content string // file content or symlink target
	xattrs  string
}

// snapshot walks a view in lexical order and records every entry.
func snapshot(t testing.TB, root string) map[string]entrySnap {
	t.Helper()
	out := map[string]entrySnap{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		e := entrySnap{mode: uint32(st.Mode), size: st.Size, ino: st.Ino}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if int64(len(b)) != st.Size {
				t.Errorf("%s: read %d bytes, stat says %d", rel, len(b), st.Size)
			}
			e.content = string(b)
		case syscall.S_IFLNK:
			s, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if int64(len(s)) != st.Size {
				t.Errorf("%s: target has %d bytes, stat says %d", rel, len(s), st.Size)
			}
			e.content = s
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
			for _, n := range listXattr(t, p) {
				e.xattrs += n + "=" + string(getXattr(t, p, n)) + "\x00"
			}
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip mounts random trees in reverse mode, then the view in
// forward mode, and checks that the result equals the plaintext minus the
// excluded paths; that the view is deterministic across mounts; and that
// inode numbers and sizes are stable while mounted.
func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		cfg  fsConfig
	}{
		{"default", fsConfig{masterKey: testutil.MasterKey(), hkdf: true}},
		{"deterministic names", fsConfig{masterKey: testutil.MasterKey(), hkdf: true, deterministic: true}},
		{"plaintext names", fsConfig{masterKey: testutil.MasterKey(), hkdf: true, plaintextNames: true, padded64: true}},
		{"legacy, longnamemax 62", fsConfig{masterKey: testutil.MasterKey(), padded64: true, longNameMax: 62}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := makeRandomTree(t, uint64(i+1), !c.cfg.plaintextNames)
			excl, isExcluded := roundTripExcludes(t)
			excl.PlainDir = g.root

			// Determinism. Which link of a hard-linked file is opened
			// first decides the bytes of all its links (docs/format.md 9.4),
			// and with readdirplus the kernel may reach a link through
			// any of its directories first, so both mounts open the
			// first link of each group by its path before walking.
			rev1, rn := mountReverse(t, c.cfg, excl)
			rev2, rn2 := mountReverse(t, c.cfg, excl)
			for _, m := range []struct {
				m  *mounted
				rn *RootNode
			}{{rev1, rn}, {rev2, rn2}} {
				for _, group := range g.hardlinks {
					enc, err := m.rn.EncryptPath(group[0])
					if err != nil {
						t.Fatal(err)
					}
					if _, err := os.ReadFile(m.m.path(enc)); err != nil {
						t.Fatal(err)
					}
				}
			}
			snap1 := snapshot(t, rev1.mnt)
			snap2 := snapshot(t, rev2.mnt)
			if len(snap1) < 50 {
				t.Errorf("only %d entries in the view", len(snap1))
			}
			for p, e1 := range snap1 {
				if e2, ok := snap2[p]; !ok || e1 != e2 {
					t.Errorf("second mount differs at %q", p)
				}
			}
			if len(snap1) != len(snap2) {
				t.Errorf("second mount has %d entries, first %d", len(snap2), len(snap1))
			}

			// Hard links show identical bytes and the same inode.
			for _, group := range g.hardlinks {
				var first entrySnap
				for j, p := range group {
					enc, err := rn.EncryptPath(p)
					if err != nil {
						t.Fatal(err)
					}
					e, ok := snap1[enc]
					if !ok {
						t.Fatalf("hard link %s (%s) missing from the view", p, enc)
					}
					if j == 0 {
						first = e
					} else if e != first {
						t.Errorf("hard link %s differs from %s in the view", p, group[0])
					}
				}
			}

			// Excluded paths: hidden and EPERM.
			for _, p := range []string{"excluded-dir", "sub/scratch.tmp", "sub/cache"} {
				enc, err := rn.EncryptPath(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := snap1[enc]; ok {
					t.Errorf("excluded %s listed", p)
				}
				if err := unix.Lstat(rev1.path(enc), new(unix.Stat_t)); err != syscall.EPERM {
					t.Errorf("excluded %s: %v, want EPERM", p, err)
				}
			}

			// Forward mount on top shows the plaintext.
			fwd := mountForward(t, c.cfg, rev1.mnt)
			n := compareTrees(t, g.root, fwd.mnt, func(rel string) bool { return rel == ReverseConfName || isExcluded(rel) })
			t.Logf("%d entries in the view, %d plaintext entries compared", len(snap1), n)

			// Stability: after the kernel caches expired, everything
			// is the same again, and readdir agrees with stat.
			time.Sleep(1100 * time.Millisecond)
			snap3 := snapshot(t, rev1.mnt)
			for p, e1 := range snap1 {
				if e3 := snap3[p]; e1 != e3 {
					t.Errorf("%q changed while mounted: %+v -> %+v", p, e1.ino, e3.ino)
				}
			}
			checkDirentInos(t, rev1.mnt, snap1)
		})
	}
}

// checkDirentInos compares the inode numbers that readdir returns with the
// ones stat returned.
func checkDirentInos(t *testing.T, root string, snap map[string]entrySnap) {
	t.Helper()
	for rel, e := range snap {
		if e.mode&syscall.S_IFMT != syscall.S_IFDIR {
			continue
		}
		fd, err := unix.Open(filepath.Join(root, rel), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := syscallcompat.Getdents(fd)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ents {
			p := filepath.Join(rel, d.Name)
			if rel == "." {
				p = d.Name
			}
			if s, ok := snap[p]; ok && s.ino != d.Ino {
				t.Errorf("%q: readdir ino %d, stat ino %d", p, d.Ino, s.ino)
			}
		}
	}
}
