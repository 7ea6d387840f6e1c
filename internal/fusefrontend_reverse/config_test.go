package fusefrontend_reverse

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/syscallcompat"
)

// viewConf is what the view shows as gocryptfs.conf: its listing entry,
// its lstat result and its content.
type viewConf struct {
	listedType uint8
	listedIno  uint64
	st         unix.Stat_t
	content    string
}

// readViewConf reads gocryptfs.conf of the mounted view: listing first,
// then lstat, then content (each a fresh request to the filesystem).
func readViewConf(t *testing.T, m *mounted) viewConf {
	t.Helper()
	var v viewConf
	fd, err := unix.Open(m.mnt, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := syscallcompat.Getdents(fd)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, e := range ents {
		if e.Name == "gocryptfs.conf" {
			listed = true
			v.listedType, v.listedIno = uint8(e.Type>>12), e.Ino
		}
		if e.Name == ReverseConfName {
			t.Errorf("%s listed under its own name", ReverseConfName)
		}
	}
	if !listed {
		t.Fatal("gocryptfs.conf is not listed")
	}
	if err := unix.Lstat(m.path("gocryptfs.conf"), &v.st); err != nil {
		t.Fatalf("lstat gocryptfs.conf: %v", err)
	}
	b, err := os.ReadFile(m.path("gocryptfs.conf"))
	if err != nil {
		t.Fatalf("read gocryptfs.conf: %v", err)
	}
	v.content = string(b)
	return v
}

// TestConfigSymlink: a .gocryptfs.reverse.conf that is a symlink to a
// config elsewhere (read through the link at mount time, as the reference
// does) is shown as a regular gocryptfs.conf with the loaded bytes and the
// loaded file's mode and inode number, identical in the listing and on
// lookup. Repointing the link after mounting (here at a secret outside
// PLAINDIR, before the view was ever read, so no cache helps) changes
// nothing: the view never follows the link itself.
func TestConfigSymlink(t *testing.T) {
	plain := makeTV14(t)
	elsewhere := t.TempDir()
	conf := filepath.Join(elsewhere, "rev.conf")
	if err := os.Rename(filepath.Join(plain, ReverseConfName), conf); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(conf, filepath.Join(plain, ReverseConfName)); err != nil {
		t.Fatal(err)
	}
	var confSt unix.Stat_t
	if err := unix.Stat(conf, &confSt); err != nil {
		t.Fatal(err)
	}
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})

	secret := filepath.Join(elsewhere, "secret")
	mustWriteFile(t, secret, []byte("SECRET outside PLAINDIR"))
	link := filepath.Join(plain, ReverseConfName)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}

	v := readViewConf(t, m)
	if v.content != tv14Conf {
		t.Errorf("gocryptfs.conf = %q, want the loaded config %q", v.content, tv14Conf)
	}
	if v.listedType != syscall.DT_REG {
		t.Errorf("gocryptfs.conf listed with type %d, want DT_REG", v.listedType)
	}
	wantIno := rn.translateIno(&confSt)
	if v.st.Mode != syscall.S_IFREG|0o400 || v.st.Size != int64(len(tv14Conf)) || v.st.Nlink != 1 ||
		v.st.Ino != wantIno || v.listedIno != wantIno {
		t.Errorf("gocryptfs.conf: mode %o size %d nlink %d ino %d (listed %d), want mode %o size %d nlink 1 ino %d",
			v.st.Mode, v.st.Size, v.st.Nlink, v.st.Ino, v.listedIno, syscall.S_IFREG|0o400, len(tv14Conf), wantIno)
	}
	// Only gocryptfs.conf changes: the rest of the view is TV-14's.
	if _, err := os.Stat(m.path("F8rwmoCL-WWYHyKmxirgkg")); err != nil {
		t.Errorf("hello.txt's encrypted name: %v", err)
	}
}

// TestConfigAsLoaded: the view serves Args.Config, the bytes the mount
// parsed, not what .gocryptfs.reverse.conf holds later (a FIFO here, which
// must not be opened, or a missing file); its attributes are those of the
// loaded file.
func TestConfigAsLoaded(t *testing.T) {
	plain := makeTV14(t)
	p := filepath.Join(plain, ReverseConfName)
	raw, err := configfile.ReadRaw(p)
	if err != nil {
		t.Fatal(err)
	}
	raw.Data = []byte(`{"as":"loaded"}`)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain, Config: raw})
	v := readViewConf(t, m)
	if v.content != string(raw.Data) || v.st.Size != int64(len(raw.Data)) {
		t.Errorf("gocryptfs.conf = %q (size %d), want %q", v.content, v.st.Size, raw.Data)
	}
	if ino := rn.translateIno(&raw.Stat); v.st.Ino != ino || v.listedIno != ino || v.listedType != syscall.DT_REG {
		t.Errorf("gocryptfs.conf: ino %d, listed %d type %d; want ino %d, DT_REG", v.st.Ino, v.listedIno, v.listedType, ino)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if v2 := readViewConf(t, m); v2.content != string(raw.Data) || v2.st.Ino != v.st.Ino {
		t.Errorf("after removing the file: gocryptfs.conf = %q, ino %d", v2.content, v2.st.Ino)
	}
}

// TestConfigRefused: without Args.Config (-masterkey), a FIFO as the
// reverse config is not opened and no gocryptfs.conf is shown.
func TestConfigRefused(t *testing.T) {
	plain := makeTV14(t)
	p := filepath.Join(plain, ReverseConfName)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	for _, n := range readDirNames(t, m.mnt) {
		if n == "gocryptfs.conf" || n == ReverseConfName {
			t.Errorf("%s listed", n)
		}
	}
	if err := unix.Lstat(m.path("gocryptfs.conf"), new(unix.Stat_t)); err != syscall.ENOENT {
		t.Errorf("lstat gocryptfs.conf: %v, want ENOENT", err)
	}
}
