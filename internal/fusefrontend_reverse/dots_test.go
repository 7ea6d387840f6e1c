package fusefrontend_reverse

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// readDirents lists an open directory with getdents, "." and ".."
// included.
func readDirents(t *testing.T, dir string) []fuse.DirEntry {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var out []fuse.DirEntry
	var buf [8192]byte
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return out
		}
		for b := buf[:n]; len(b) > 0; {
			var de fuse.DirEntry
			b = b[de.Parse(b):]
			out = append(out, de)
		}
	}
}

// TestReaddirDots: the reverse view lists "." and ".." like any local
// directory, with the inode numbers of the directory and its parent; the
// root's is PLAINDIR's.
func TestReaddirDots(t *testing.T) {
	plain := t.TempDir()
	if err := os.Mkdir(filepath.Join(plain, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	ino := func(p string) uint64 {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	// The root shows PLAINDIR's inode number, not 0 (issue 21).
	if got, want := ino(m.mnt), ino(plain); got != want || got == 0 {
		t.Errorf("root inode %d, want PLAINDIR's %d", got, want)
	}
	root := readDirents(t, m.mnt)
	var sub string
	for _, de := range root {
		if de.Mode&unix.S_IFMT == unix.S_IFDIR && de.Name != "." && de.Name != ".." {
			sub = filepath.Join(m.mnt, de.Name)
		}
	}
	if sub == "" {
		t.Fatal("encrypted subdirectory not listed")
	}
	for _, c := range []struct {
		dir          string
		self, parent uint64
	}{
		{m.mnt, ino(m.mnt), ino(m.mnt)},
		{sub, ino(sub), ino(m.mnt)},
	} {
		ents := readDirents(t, c.dir)
		i := slices.IndexFunc(ents, func(de fuse.DirEntry) bool { return de.Name == "." })
		j := slices.IndexFunc(ents, func(de fuse.DirEntry) bool { return de.Name == ".." })
		if i < 0 || j < 0 {
			t.Fatalf("%s: no . or .. in %v", c.dir, ents)
		}
		if ents[i].Ino != c.self || ents[j].Ino != c.parent {
			t.Errorf("%s: . has ino %d, .. %d; want %d, %d", c.dir, ents[i].Ino, ents[j].Ino, c.self, c.parent)
		}
	}
}
