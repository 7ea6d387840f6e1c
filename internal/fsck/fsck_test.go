package fsck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/contentio"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// variant is one filesystem configuration to build and check.
type variant struct {
	name          string
	cipher        cryptocore.ContentCipher
	plaintext     bool
	deterministic bool
	raw64         bool
	longNameMax   int
}

var variants = []variant{
	{name: "gcm", cipher: cryptocore.AESGCM, raw64: true},
	{name: "siv", cipher: cryptocore.AESSIV, raw64: true},
	{name: "xchacha", cipher: cryptocore.XChaCha20Poly1305, raw64: true},
	{name: "deterministic", cipher: cryptocore.AESGCM, deterministic: true, raw64: true},
	{name: "plaintextnames", cipher: cryptocore.AESGCM, plaintext: true},
	{name: "padded64-longnamemax62", cipher: cryptocore.AESGCM, longNameMax: 62},
}

// fsys builds ciphertext directly with the core packages, the way a mount
// would, so that the test does not depend on the FUSE frontend.
type fsys struct {
	t    *testing.T
	dir  string
	nt   *nametransform.NameTransform
	ce   *contentenc.ContentEnc
	tbl  *contentio.Table
	ivs  map[string][]byte // cipher dir path -> IV
	encs map[string]string // plain path -> cipher path
}

func newFS(t *testing.T, v variant) *fsys {
	t.Helper()
	core := coretest.New(t, coretest.Options{Cipher: v.cipher, HKDF: true, Names: nametransform.Options{
		PlaintextNames: v.plaintext, DeterministicNames: v.deterministic, Raw64: v.raw64, LongNameMax: v.longNameMax,
	}})
	f := &fsys{t: t, dir: t.TempDir(), nt: core.NT, ce: core.CE, tbl: contentio.NewTable(),
		ivs: map[string][]byte{}, encs: map[string]string{"": ""}}
	os.WriteFile(filepath.Join(f.dir, "gocryptfs.conf"), []byte("{}"), 0o400)
	if !v.plaintext {
		// Config side files (stale .tmp, -passwd -masterkey backup) are
		// not entries.
		os.WriteFile(filepath.Join(f.dir, "gocryptfs.conf.tmp"), []byte("{"), 0o400)
		os.Link(filepath.Join(f.dir, "gocryptfs.conf"), filepath.Join(f.dir, "gocryptfs.conf.bak"))
	}
	f.ivs[""] = f.writeDirIV("")
	return f
}

func (f *fsys) dirfd(cipherDir string) int {
	fd, err := unix.Open(filepath.Join(f.dir, cipherDir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return fd
}

func (f *fsys) writeDirIV(cipherDir string) []byte {
	if !f.nt.UsesDirIV() {
		return nil
	}
	fd := f.dirfd(cipherDir)
	defer unix.Close(fd)
	iv, err := nametransform.WriteDirIVAt(fd)
	if err != nil {
		f.t.Fatal(err)
	}
	return iv
}

// name returns the backing path for plain path p, creating the long-name
// companion file if needed.
func (f *fsys) name(p string) string {
	dir, base := filepath.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	cdir := f.encs[dir]
	enc, err := f.nt.EncryptName(base, f.ivs[cdir])
	if err != nil {
		f.t.Fatal(err)
	}
	stored, long := f.nt.HashIfLong(enc)
	if long {
		fd := f.dirfd(cdir)
		defer unix.Close(fd)
		if err := f.nt.WriteLongNameAt(fd, stored, enc); err != nil {
			f.t.Fatal(err)
		}
	}
	c := stored
	if cdir != "" {
		c = cdir + "/" + stored
	}
	f.encs[p] = c
	return c
}

func (f *fsys) path(c string) string { return filepath.Join(f.dir, c) }

func (f *fsys) mkdir(p string) {
	c := f.name(p)
	if err := os.Mkdir(f.path(c), 0o755); err != nil {
		f.t.Fatal(err)
	}
	f.ivs[c] = f.writeDirIV(c)
}

// file writes content at off through contentio (an empty content creates
// an empty file; a size > 0 with nil content grows it by truncation).
func (f *fsys) file(p string, content []byte, truncate uint64) {
	c := f.name(p)
	fd, err := unix.Open(f.path(c), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	cf, err := contentio.Open(f.tbl, f.ce, fd, contentio.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	defer cf.Close()
	if len(content) > 0 {
		if _, err := cf.WriteAt(content, 0); err != nil {
			f.t.Fatal(err)
		}
	}
	if truncate > 0 {
		if err := cf.Truncate(context.Background(), truncate); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fsys) symlink(p, target string) {
	c := f.name(p)
	st, err := f.nt.EncryptSymlinkTarget(target)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(st, f.path(c)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fsys) setxattr(p, name string, value []byte) {
	sn, err := f.nt.EncryptXattrName(name)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := unix.Setxattr(f.path(f.encs[p]), sn, f.nt.EncryptXattrValue(value), 0); err != nil {
		f.t.Fatal(err)
	}
}

// populate creates one of everything, all healthy.
func (f *fsys) populate() {
	f.file("empty", nil, 0)
	f.file("one", []byte("a"), 0)
	f.file("f4096", []byte(strings.Repeat("x", 4096)), 0)
	f.file("f10000", []byte(strings.Repeat("y", 10000)), 0)
	f.file("hole", nil, 3*4096+7)      // holes, then a real last block
	f.file("alignedhole", nil, 2*4096) // holes only
	f.mkdir("dir1")
	f.mkdir("dir1/sub")
	f.file("dir1/sub/deep.txt", []byte("deep"), 0)
	f.file("dir1/"+strings.Repeat("L", 200), []byte("long"), 0)
	f.mkdir(strings.Repeat("D", 180))
	f.file(strings.Repeat("D", 180)+"/x", []byte("in long dir"), 0)
	f.symlink("link1", "one")
	f.symlink("dir1/abs", "/some/absolute/target")
	f.setxattr("one", "user.foo", []byte("bar"))
	f.setxattr("one", "user.empty", nil)
	f.setxattr("dir1", "user.dirattr", []byte("xyz"))
	f.setxattr("", "user.rootattr", []byte("r"))
	if err := os.Link(f.path(f.encs["one"]), f.path(f.name("zhardlink"))); err != nil {
		f.t.Fatal(err)
	}
	if err := unix.Mkfifo(f.path(f.name("fifo")), 0o644); err != nil {
		f.t.Fatal(err)
	}
	// Backing xattrs the mount does not show are not checked.
	unix.Setxattr(f.path(f.encs["one"]), "user.direct", []byte("raw"), 0)
}

// check runs fsck and returns the result and the problem lines.
func (f *fsys) check() (fsck.Result, []fsck.Problem) {
	var probs []fsck.Problem
	res, err := fsck.Check(context.Background(), fsck.Options{
		CipherDir: f.dir, NameTransform: f.nt, ContentEnc: f.ce,
		Report: func(p fsck.Problem) { probs = append(probs, p) },
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return res, probs
}

func TestCleanFilesystems(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := newFS(t, v)
			f.populate()
			before := testutil.TreeSum(t, f.dir)
			res, probs := f.check()
			if !res.Clean() || len(probs) != 0 {
				t.Errorf("clean filesystem: %+v, problems %v", res, probs)
			}
			if after := testutil.TreeSum(t, f.dir); after != before {
				t.Error("fsck changed the ciphertext directory")
			}
		})
	}
}

// fault plants one kind of damage and says what fsck must report.
type fault struct {
	name  string
	plant func(f *fsys)
	// kind, path and a substring of the message expected.
	kind fsck.Kind
	path string
	msg  string
}

func writeAt(t *testing.T, path string, data []byte, off int64) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, path, []byte{b[off] ^ 0x01}, off)
}

var faults = []fault{
	{"flipped block byte", func(f *fsys) {
		flipByte(f.t, f.path(f.encs["f10000"]), int64(18+f.ce.CipherBS()+100))
	}, fsck.FileError, "f10000", "corrupt block #1"},
	{"bad header version", func(f *fsys) {
		writeAt(f.t, f.path(f.encs["one"]), []byte{0, 3}, 0)
	}, fsck.FileError, "one", "ParseHeader: invalid version, want=2 have=3"},
	{"incomplete last block", func(f *fsys) {
		os.Truncate(f.path(f.encs["f10000"]), int64(18+2*f.ce.CipherBS()+20))
	}, fsck.FileError, "f10000", "corrupt block #2"},
	{"truncated header", func(f *fsys) {
		os.Truncate(f.path(f.encs["f4096"]), 10)
	}, fsck.FileError, "f4096", "truncated file header: 10 bytes"},
	{"corrupt block after hole", func(f *fsys) {
		flipByte(f.t, f.path(f.encs["hole"]), int64(18+3*f.ce.CipherBS()+20))
	}, fsck.FileError, "hole", "corrupt block #3"},
	{"undecryptable name", func(f *fsys) {
		os.WriteFile(filepath.Join(f.dir, "foo"), nil, 0o644)
	}, fsck.CorruptName, "", `"foo"`},
	{"missing diriv", func(f *fsys) {
		os.Remove(filepath.Join(f.path(f.encs["dir1/sub"]), "gocryptfs.diriv"))
	}, fsck.DirError, "dir1/sub", "no such file or directory"},
	{"bad diriv", func(f *fsys) {
		p := filepath.Join(f.path(f.encs["dir1"]), "gocryptfs.diriv")
		os.Chmod(p, 0o644)
		os.WriteFile(p, []byte("short"), 0o644)
	}, fsck.DirError, "dir1", "5 bytes instead of 16"},
	{"missing long-name file", func(f *fsys) {
		os.Remove(f.path(f.encs["dir1/"+strings.Repeat("L", 200)]) + ".name")
	}, fsck.CorruptName, "dir1", "gocryptfs.longname."},
	{"empty long-name file", func(f *fsys) {
		p := f.path(f.encs[strings.Repeat("D", 180)]) + ".name"
		os.Chmod(p, 0o644)
		os.WriteFile(p, nil, 0o644)
	}, fsck.CorruptName, "", "invalid long name file"},
	{"corrupt symlink target", func(f *fsys) {
		p := f.path(f.encs["link1"])
		os.Remove(p)
		os.Symlink("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", p)
	}, fsck.SymlinkError, "link1", "undecryptable symlink target"},
	{"corrupt xattr value", func(f *fsys) {
		sn, _ := f.nt.EncryptXattrName("user.dirattr")
		p := f.path(f.encs["dir1"])
		v := make([]byte, 100)
		n, _ := unix.Getxattr(p, sn, v)
		v[n-1] ^= 1
		unix.Setxattr(p, sn, v[:n], 0)
	}, fsck.XattrValueError, "dir1", `"user.dirattr"`},
	{"orphan long-name file", func(f *fsys) {
		p := filepath.Join(f.path(f.encs["dir1"]), "gocryptfs.longname."+strings.Repeat("Q", 43)+".name")
		os.WriteFile(p, []byte("orphan"), 0o444)
	}, fsck.OrphanLongName, "dir1", "orphan long name file"},
	{"corrupt xattr name", func(f *fsys) {
		unix.Setxattr(f.path(f.encs["one"]), "user.gocryptfs.notbase64!", []byte("x"), 0)
	}, fsck.XattrNameError, "one", "user.gocryptfs.notbase64!"},
}

func TestFaults(t *testing.T) {
	for _, v := range variants {
		for _, fl := range faults {
			if v.plaintext && (fl.kind == fsck.CorruptName || fl.kind == fsck.DirError || fl.kind == fsck.SymlinkError || fl.kind == fsck.OrphanLongName) {
				continue // no name encryption, no IVs, targets stored verbatim
			}
			if v.deterministic && fl.kind == fsck.DirError {
				continue // no gocryptfs.diriv files
			}
			t.Run(v.name+"/"+fl.name, func(t *testing.T) {
				f := newFS(t, v)
				f.populate()
				fl.plant(f)
				before := testutil.TreeSum(t, f.dir)
				res, probs := f.check()
				if after := testutil.TreeSum(t, f.dir); after != before {
					t.Error("fsck changed the ciphertext directory")
				}
				if res.Corrupt != 1 || res.Skipped != 0 || len(probs) != 1 {
					t.Fatalf("want exactly one problem, got %+v: %v", res, probs)
				}
				p := probs[0]
				line := p.String()
				if p.Kind != fl.kind || p.Path != fl.path || !strings.Contains(line, fl.msg) {
					t.Errorf("got %q (kind %d, path %q), want kind %d, path %q, containing %q",
						line, p.Kind, p.Path, fl.kind, fl.path, fl.msg)
				}
				if !strings.HasPrefix(line, "fsck: ") {
					t.Errorf("line %q does not start with \"fsck: \"", line)
				}
			})
		}
	}
}

// TestQuarantineSkipped: gocryptfs.quarantine in the root holds what
// -fsck -repair took out; it is never read as filesystem content.
func TestQuarantineSkipped(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			f := newFS(t, v)
			f.populate()
			q := filepath.Join(f.dir, "gocryptfs.quarantine", "20260102T030405Z")
			if err := os.MkdirAll(q, 0o700); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(q, "junk"), []byte("junk"), 0o600)
			os.WriteFile(filepath.Join(f.dir, "gocryptfs.quarantine", "20260102T030405Z.journal"), []byte("{}"), 0o600)
			if res, probs := f.check(); !res.Clean() {
				t.Errorf("quarantine checked: %v", probs)
			}
			// Elsewhere the name is nothing special.
			os.Mkdir(filepath.Join(f.path(f.encs["dir1"]), "gocryptfs.quarantine"), 0o700)
			if res, _ := f.check(); res.Clean() != v.plaintext {
				t.Errorf("gocryptfs.quarantine outside the root: clean=%v", res.Clean())
			}
		})
	}
}

// TestAllFaultsAtOnce plants every fault into one filesystem: each is
// found, in walk order, and the hard link to a corrupt file counts once.
func TestAllFaultsAtOnce(t *testing.T) {
	f := newFS(t, variants[0])
	f.populate()
	want := map[string]bool{}
	for _, fl := range faults {
		if fl.name == "truncated header" || fl.name == "incomplete last block" || fl.name == "bad diriv" {
			continue // would mask other faults planted into the same entries
		}
		fl.plant(f)
		want[fl.name] = true
	}
	res, probs := f.check()
	if res.Corrupt != len(want) || len(probs) != len(want) {
		var lines []string
		for _, p := range probs {
			lines = append(lines, p.String())
		}
		t.Fatalf("want %d problems, got %+v:\n%s", len(want), res, strings.Join(lines, "\n"))
	}
	// Sorted walk: root-level corrupt names first, then entries in plaintext order.
	if probs[0].Kind != fsck.CorruptName {
		t.Errorf("first problem %v, want the corrupt root entries first", probs[0])
	}
}

func TestHardLinkCheckedOnce(t *testing.T) {
	f := newFS(t, variants[0])
	f.populate()
	writeAt(t, f.path(f.encs["one"]), []byte{0, 9}, 0) // "zhardlink" is the same inode
	res, probs := f.check()
	if res.Corrupt != 1 || len(probs) != 1 {
		t.Errorf("got %+v %v, want one problem", res, probs)
	}
}

func TestSkippedWhenUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read everything")
	}
	f := newFS(t, variants[0])
	f.populate()
	os.Chmod(f.path(f.encs["one"]), 0)
	res, probs := f.check()
	if res.Skipped != 1 || res.Corrupt != 0 || probs[0].Kind != fsck.Skipped {
		t.Errorf("got %+v %v", res, probs)
	}
}

func TestCancel(t *testing.T) {
	f := newFS(t, variants[0])
	f.populate()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fsck.Check(ctx, fsck.Options{CipherDir: f.dir, NameTransform: f.nt, ContentEnc: f.ce})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSetupErrors(t *testing.T) {
	f := newFS(t, variants[0])
	for _, o := range []fsck.Options{
		{},
		{CipherDir: f.dir},
		{CipherDir: filepath.Join(f.dir, "nonexistent"), NameTransform: f.nt, ContentEnc: f.ce},
	} {
		if _, err := fsck.Check(context.Background(), o); !errors.Is(err, fsck.ErrSetup) {
			t.Errorf("%+v: err = %v, want ErrSetup", o, err)
		}
	}
}
