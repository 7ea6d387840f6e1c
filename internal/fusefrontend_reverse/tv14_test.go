package fusefrontend_reverse

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
)

// tv14Conf stands in for the .gocryptfs.reverse.conf of TV-14; the view
// must show its bytes unchanged as gocryptfs.conf.
const tv14Conf = "{\n\t\"Creator\": \"test\",\n\t\"Version\": 2\n}\n"

// makeTV14 builds the plaintext directory "rplain" of docs/format.md TV-14.
func makeTV14(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	f5000 := make([]byte, 5000)
	for i := range f5000 {
		f5000[i] = 'A' + byte(i%26)
	}
	files := []struct {
		name string
		data []byte
	}{
		{"hello.txt", []byte("hello world\n")},
		{"empty", nil},
		{"f5000", f5000},
		{"dir1/file.txt", []byte("abc")},
		{strings.Repeat("N", 176), []byte("long")},
		{ReverseConfName, []byte(tv14Conf)},
	}
	if err := os.Mkdir(filepath.Join(dir, "dir1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, ReverseConfName), 0o400); err != nil {
		t.Fatal(err)
	}
	links := [][2]string{{"hello.txt", "link1"}, {"../hello.txt", "dir1/link2"}}
	for _, l := range links {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	xattrs := [][3]string{{"hello.txt", "user.foo", "bar"}, {"dir1", "user.dirattr", "xyz"}, {"", "user.rootattr", "r"}}
	for _, x := range xattrs {
		if err := unix.Lsetxattr(filepath.Join(dir, x[0]), x[1], []byte(x[2]), 0); err != nil {
			t.Fatalf("setxattr %v: %v", x, err)
		}
	}
	return dir
}

func tv14Config() fsConfig { return fsConfig{masterKey: testutil.MasterKey(), hkdf: true} }

// TestTV14 reproduces docs/format.md TV-14 byte for byte through a real mount.
func TestTV14(t *testing.T) {
	plain := makeTV14(t)
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	const (
		dir1    = "7s5GSiP46Ev-749M2p4GuA"
		hashed  = "gocryptfs.longname.KZLhv8Iemgv84uuZqY908y2e19RsTZPgkEo3Jo0hgw8"
		nameEnc = "urKwM9ZaiTRLJ0Pk02myITwTBfV6VCla_5dqT07i9T0hOAvRAA4CTMT_7c--aFna__UcoQZVmp1-KVPFmL7BIAWg5vk-p3Mej8hY4uZt8FhKEa7R5jNqaEUGxeAqIPrKueol3RXSPff2ASTSIUZjtg9k289YLLGRS2fKY4ZL42dkt4SIimIexMHk4RcP5LgnIwZfVxZhV6q48boFI3YvOoBvvQGpvv3Rnko3N8u1p9bJzPAoQHuphPaGoIkD8-KD"
	)

	t.Run("listing", func(t *testing.T) {
		cases := []struct {
			dir  string
			want []string
		}{
			{"", []string{"F8rwmoCL-WWYHyKmxirgkg", "46nvrw-F3nG339VAygltgg", "iah1MkNOCMZe5AW-W605oQ", dir1,
				"XQJH2Es0-94o4Jo8iSvfzQ", hashed, hashed + ".name", "gocryptfs.conf", "gocryptfs.diriv"}},
			{dir1, []string{"LUBtDMqIDF6AIgI9Cpq3Tg", "F90nXEGIdB1N8vLe3Ccr6A", "gocryptfs.diriv"}},
		}
		for _, c := range cases {
			got := readDirNames(t, m.path(c.dir))
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Errorf("listing of %q:\n got %q\nwant %q", c.dir, got, c.want)
			}
		}
	})

	t.Run("sizes", func(t *testing.T) {
		cases := []struct {
			path string
			mode uint32
			size int64
		}{
			{"F8rwmoCL-WWYHyKmxirgkg", syscall.S_IFREG, 62},
			{"46nvrw-F3nG339VAygltgg", syscall.S_IFREG, 0},
			{"iah1MkNOCMZe5AW-W605oQ", syscall.S_IFREG, 5082},
			{dir1 + "/LUBtDMqIDF6AIgI9Cpq3Tg", syscall.S_IFREG, 53},
			{"XQJH2Es0-94o4Jo8iSvfzQ", syscall.S_IFLNK, 55},
			{dir1 + "/F90nXEGIdB1N8vLe3Ccr6A", syscall.S_IFLNK, 59},
			{hashed, syscall.S_IFREG, 54},
			{hashed + ".name", syscall.S_IFREG, 256},
			{"gocryptfs.conf", syscall.S_IFREG, int64(len(tv14Conf))},
			{"gocryptfs.diriv", syscall.S_IFREG, 16},
			{dir1 + "/gocryptfs.diriv", syscall.S_IFREG, 16},
		}
		for _, c := range cases {
			var st unix.Stat_t
			if err := unix.Lstat(m.path(c.path), &st); err != nil {
				t.Errorf("%s: %v", c.path, err)
				continue
			}
			if uint32(st.Mode&syscall.S_IFMT) != c.mode || st.Size != c.size {
				t.Errorf("%s: mode %o size %d, want type %o size %d", c.path, st.Mode, st.Size, c.mode, c.size)
			}
		}
	})

	t.Run("contents", func(t *testing.T) {
		cases := []struct {
			path string
			want []byte
		}{
			{"F8rwmoCL-WWYHyKmxirgkg", testutil.MustHex(t, "0002 70aaab02fdd720312e1e339196d03d20 d8f0422ea29cf884663bb0c1a6465a31 c1f5939968850a66b926d42aa80b2bec f5dd2e8669796a0b99b9f021")},
			{dir1 + "/LUBtDMqIDF6AIgI9Cpq3Tg", testutil.MustHex(t, "0002 8304b698788a6db7a149e9b10def78e5 6341be15d7a683bbb0bf36f63bbf9273 7e69567c820ba894b011f699ef9d5c60 f17713")},
			{hashed, testutil.MustHex(t, "0002 9b9dcc694a9c119b8590cc70ba96eed8 552bcf47ffc4fed85d9eee6c334c19a1 4505bd9a636c558b7a05865fb00b9299 d1735e30")},
			{"46nvrw-F3nG339VAygltgg", nil},
			{hashed + ".name", []byte(nameEnc)},
			{"gocryptfs.conf", []byte(tv14Conf)},
			{"gocryptfs.diriv", testutil.MustHex(t, "a8f7bac432ddc1cb3dc74e684d6ae48b")},
			{dir1 + "/gocryptfs.diriv", testutil.MustHex(t, "32aaf73548280eef86d3a23a5d1e97b3")},
		}
		for _, c := range cases {
			got, err := os.ReadFile(m.path(c.path))
			if err != nil {
				t.Errorf("%s: %v", c.path, err)
				continue
			}
			if string(got) != string(c.want) {
				t.Errorf("%s:\n got %x\nwant %x", c.path, got, c.want)
			}
		}
		f5000, err := os.ReadFile(m.path("iah1MkNOCMZe5AW-W605oQ"))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(f5000); hex.EncodeToString(sum[:]) != "5a86aea2e147d9af23c03dfe27f110bce757a402ccc5de77ea1c2b0e72bd59a2" {
			t.Errorf("f5000 SHA-256 %x", sum)
		}
		// xray facts: block 0 and 1 nonces.
		if len(f5000) == 5082 {
			if got := hex.EncodeToString(f5000[18:34]); got != "e01683d2594243feb1a501820556f035" {
				t.Errorf("block 0 IV %s", got)
			}
			if got := hex.EncodeToString(f5000[4146:4162]); got != "e01683d2594243feb1a501820556f036" {
				t.Errorf("block 1 IV %s", got)
			}
		}
	})

	t.Run("partial reads", func(t *testing.T) {
		whole, err := os.ReadFile(m.path("iah1MkNOCMZe5AW-W605oQ"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(m.path("iah1MkNOCMZe5AW-W605oQ"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cases := [][2]int{{0, 1}, {1, 17}, {17, 2}, {18, 16}, {100, 4100}, {4145, 2}, {4146, 936}, {5000, 200}, {5081, 1}, {5082, 10}}
		for _, c := range cases {
			buf := make([]byte, c[1])
			n, _ := f.ReadAt(buf, int64(c[0]))
			want := whole[min(c[0], len(whole)):min(c[0]+c[1], len(whole))]
			if string(buf[:n]) != string(want) {
				t.Errorf("ReadAt(%d, %d): got %d bytes, mismatch", c[0], c[1], n)
			}
		}
	})

	t.Run("symlinks", func(t *testing.T) {
		cases := [][2]string{
			{"XQJH2Es0-94o4Jo8iSvfzQ", "o3HFQ6U3U7LmhEY6t5E7PAeTdtikjPsyTXxEoXOYe6-ZBFFXivNjx7w"},
			{dir1 + "/F90nXEGIdB1N8vLe3Ccr6A", "Q9a63B3v1JFbZ5hzZDOvCMrxJ279S5wRdG3pem1zRyPWvnNT7195fdUA8B4"},
		}
		for _, c := range cases {
			got, err := os.Readlink(m.path(c[0]))
			if err != nil || got != c[1] {
				t.Errorf("readlink %s = %q, %v; want %q", c[0], got, err, c[1])
			}
		}
	})

	t.Run("xattrs", func(t *testing.T) {
		cases := []struct{ path, name, value string }{
			{"F8rwmoCL-WWYHyKmxirgkg", "user.gocryptfs.49MtW6o4r3wu_Jt77wclOA", "db3a366fda9e22b2436f4e7cc81baaba8575a4c85a69164b1ec460f7ad3913bd13797a"},
			{dir1, "user.gocryptfs.MAb3gsHE9eO1kzcIOWX7-A", "09f96da366e78edcb61c43ae6a46ac0c8a94e500d0bc2e5de50aa564fcf871970ce6ba"},
			{"", "user.gocryptfs.B6IIy-Bqa6JVExB9g6q5UA", "606acbf75489cbaf6e924ada7137aa7497e2ab74af5e2c0154a801d4a4a3c5bf2f"},
		}
		for _, c := range cases {
			names := listXattr(t, m.path(c.path))
			if !slices.Equal(names, []string{c.name}) {
				t.Errorf("%q: xattr names %q, want [%s]", c.path, names, c.name)
			}
			v := getXattr(t, m.path(c.path), c.name)
			if hex.EncodeToString(v) != c.value {
				t.Errorf("%q %s = %x, want %s", c.path, c.name, v, c.value)
			}
		}
		if _, err := unix.Lgetxattr(m.path("F8rwmoCL-WWYHyKmxirgkg"), "user.foo", nil); err != syscall.ENODATA {
			t.Errorf("plaintext xattr name visible: %v", err)
		}
	})

	t.Run("inode numbers", func(t *testing.T) {
		var root, diriv, dir, dirDiriv, nameFile unix.Stat_t
		for p, st := range map[string]*unix.Stat_t{"": &root, "gocryptfs.diriv": &diriv, dir1: &dir,
			dir1 + "/gocryptfs.diriv": &dirDiriv, hashed + ".name": &nameFile} {
			if err := unix.Lstat(m.path(p), st); err != nil {
				t.Fatal(err)
			}
		}
		var plainRoot unix.Stat_t
		if err := unix.Lstat(plain, &plainRoot); err != nil {
			t.Fatal(err)
		}
		if root.Ino != plainRoot.Ino {
			t.Errorf("root ino %d, want %d", root.Ino, plainRoot.Ino)
		}
		if diriv.Ino != 1<<48|root.Ino || dirDiriv.Ino != 1<<48|dir.Ino {
			t.Errorf("diriv inos %d %d, want 2^48 + %d, %d", diriv.Ino, dirDiriv.Ino, root.Ino, dir.Ino)
		}
		if nameFile.Ino < 1<<63 {
			t.Errorf(".name ino %d below 2^63", nameFile.Ino)
		}
		if diriv.Mode != syscall.S_IFREG|0o444 || diriv.Nlink != 1 || diriv.Mtim.Sec != root.Mtim.Sec+10 || diriv.Ctim.Sec != root.Ctim.Sec+10 || diriv.Uid != root.Uid {
			t.Errorf("diriv attrs %+v vs dir %+v", diriv, root)
		}
	})

	t.Run("dot and dotdot", func(t *testing.T) {
		for _, dir := range []string{"", dir1} {
			for _, name := range []string{".", ".."} {
				enc := encryptRaw(t, rn, name, dir)
				if err := unix.Lstat(m.path(joinPath(dir, enc)), new(unix.Stat_t)); err != syscall.ENOENT {
					t.Errorf("%q/%s (%s): %v, want ENOENT", dir, name, enc, err)
				}
			}
		}
	})

	t.Run("read-only", func(t *testing.T) {
		checkReadOnly(t, m, "F8rwmoCL-WWYHyKmxirgkg", dir1, "gocryptfs.diriv")
	})

	t.Run("paths", func(t *testing.T) {
		cases := [][2]string{
			{"hello.txt", "F8rwmoCL-WWYHyKmxirgkg"},
			{"dir1/file.txt", dir1 + "/LUBtDMqIDF6AIgI9Cpq3Tg"},
			{strings.Repeat("N", 176), hashed},
			{ReverseConfName, "gocryptfs.conf"},
		}
		for _, c := range cases {
			enc, err := rn.EncryptPath(c[0])
			if err != nil || enc != c[1] {
				t.Errorf("EncryptPath(%q) = %q, %v; want %q", c[0], enc, err, c[1])
			}
			dec, err := rn.DecryptPath(c[1])
			if err != nil || dec != c[0] {
				t.Errorf("DecryptPath(%q) = %q, %v; want %q", c[1], dec, err, c[0])
			}
		}
		if _, err := rn.DecryptPath(dir1 + "/gocryptfs.longname.abc"); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("DecryptPath of unknown long name: %v", err)
		}
		if _, err := rn.DecryptPath("gocryptfs.diriv"); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("DecryptPath of diriv: %v", err)
		}
	})
}

// encryptRaw EME-encrypts name with the directory IV of the view directory
// cDir, bypassing nametransform's refusal of "." and "..".
func encryptRaw(t testing.TB, rn *RootNode, name, cDir string) string {
	t.Helper()
	cc, _, _ := newCrypto(t, tv14Config())
	k := 16 - len(name)%16
	padded := []byte(name)
	for range k {
		padded = append(padded, byte(k))
	}
	ct := cc.EME.Encrypt(nametransform.PathIV(cDir, nametransform.PurposeDirIV), padded)
	return rn.nt.B64().EncodeToString(ct)
}

// checkReadOnly verifies that modifications through the view fail with
// EROFS.
func checkReadOnly(t *testing.T, m *mounted, file, dir, virtual string) {
	t.Helper()
	cases := []struct {
		name string
		fn   func() error
	}{
		{"create", func() error { return os.WriteFile(m.path("newfile"), nil, 0o644) }},
		{"mkdir", func() error { return os.Mkdir(m.path("newdir"), 0o755) }},
		{"symlink", func() error { return os.Symlink("x", m.path("newlink")) }},
		{"open for writing", func() error {
			f, err := os.OpenFile(m.path(file), os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"open virtual for writing", func() error {
			f, err := os.OpenFile(m.path(virtual), os.O_RDWR, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"unlink", func() error { return os.Remove(m.path(file)) }},
		{"rmdir", func() error { return syscall.Rmdir(m.path(dir)) }},
		{"rename", func() error { return os.Rename(m.path(file), m.path("renamed")) }},
		{"chmod", func() error { return os.Chmod(m.path(file), 0o600) }},
		{"truncate", func() error { return os.Truncate(m.path(file), 0) }},
		{"setxattr", func() error { return unix.Lsetxattr(m.path(file), "user.x", []byte("y"), 0) }},
		{"removexattr", func() error { return unix.Lremovexattr(m.path(file), "user.x") }},
		{"link", func() error { return os.Link(m.path(file), m.path("hardlink")) }},
	}
	for _, c := range cases {
		if err := c.fn(); !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", c.name, err)
		}
	}
}

func readDirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func listXattr(t testing.TB, p string) []string {
	t.Helper()
	buf := make([]byte, 64*1024)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		t.Fatalf("listxattr %s: %v", p, err)
	}
	var names []string
	for s := range strings.SplitSeq(string(buf[:n]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	return names
}

func getXattr(t testing.TB, p, name string) []byte {
	t.Helper()
	buf := make([]byte, 64*1024)
	n, err := unix.Lgetxattr(p, name, buf)
	if err != nil {
		t.Fatalf("getxattr %s %s: %v", p, name, err)
	}
	return buf[:n]
}
