package hostile_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// The master key of every filesystem of the suite: a fixed key lets the
// test write ciphertext (valid names, files, directories) directly into
// CIPHERDIR with coretest, as an attacker holding an old mount's files
// could.
const masterKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

const (
	// sentinelSecret is the plaintext of the files outside CIPHERDIR
	// (in clear and as valid ciphertext of the filesystem): it must never
	// come out of a component unless the attack legitimately put that
	// ciphertext into CIPHERDIR (a hard link).
	sentinelSecret = "OUTSIDE-SENTINEL-SECRET-7f3a"
	// insidePlain is the plaintext of the filesystem's own files: it must
	// never appear in clear in CIPHERDIR or outside.
	insidePlain = "INSIDE-PLAINTEXT-52c1"
)

// longPlain is a plaintext name long enough to be stored hashed, with a
// gocryptfs.longname.*.name companion file.
var longPlain = strings.Repeat("L", 200)

// longNameFile is the prefix of the long name's stored name, as -fsck
// prints it.
const longNameFile = "gocryptfs.longname."

// fixture is one fresh filesystem with healthy content, and a sentinel
// directory outside it that the attacks point at.
//
// CIPHERDIR holds (plaintext view): f.txt, d/ with d/inner.txt and d/sub/,
// a long-named file, and a symlink "link" -> f.txt, all with insidePlain.
// outside holds: secret.txt (sentinelSecret in clear), cipher.bin (a
// valid ciphertext file of the filesystem holding sentinelSecret),
// corrupt.bin (the same with a damaged block), encdir/ (a valid
// ciphertext directory with its own IV, holding inner.txt with
// sentinelSecret under the name it has in encdir, and a damaged file),
// root.diriv (a copy of the root IV) and long.name (a copy of the long
// name's .name file).
type fixture struct {
	cipher, outside string
	core            coretest.Core
	// enc maps plaintext paths to ciphertext paths relative to cipher.
	enc map[string]string
	// outsideEncInner is encdir's ciphertext name for "inner.txt".
	outsideEncInner string
}

// newFixture creates the filesystem with the binary (-init, cheap
// scrypt, fixed master key) and the content with coretest.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		cipher:  testutil.NewDir(t, "cipher"),
		outside: testutil.NewDir(t, "outside"),
		enc:     map[string]string{},
	}
	expect(t, "-init", gocryptfs(t, append(append([]string{"-init", "-q", "-scryptn", "10", "-masterkey=" + masterKeyHex}, pw...), f.cipher)...), 0)
	key, _ := hex.DecodeString(masterKeyHex)
	f.core = coretest.New(t, coretest.Options{MasterKey: key, HKDF: true, Names: nametransform.Options{Raw64: true}})
	c := f.core
	// Valid ciphertext holding the secret, moved outside.
	x := coretest.Mkdir(t, c, f.cipher, "x")
	f.outsideEncInner = filepath.Base(coretest.WriteFile(t, c, f.cipher, "x/inner.txt", []byte(sentinelSecret)))
	// A damaged file in it: -fsck would report it, -fsck -repair move
	// it, if either followed a symlink to encdir.
	bad := coretest.WriteFile(t, c, f.cipher, "x/bad.txt", []byte(sentinelSecret))
	testutil.FlipByte(t, filepath.Join(f.cipher, bad), contentenc.HeaderLen+20, 0x01)
	mustRun(t, "mv", filepath.Join(f.cipher, x), filepath.Join(f.outside, "encdir"))
	// The same damage in a lone file, for hard links.
	corrupt := coretest.WriteFile(t, c, f.cipher, "corrupt.bin", []byte(sentinelSecret))
	testutil.FlipByte(t, filepath.Join(f.cipher, corrupt), contentenc.HeaderLen+20, 0x01)
	must(t, os.Rename(filepath.Join(f.cipher, corrupt), filepath.Join(f.outside, "corrupt.bin")))
	sec := coretest.WriteFile(t, c, f.cipher, "secret.bin", []byte(sentinelSecret))
	must(t, os.Rename(filepath.Join(f.cipher, sec), filepath.Join(f.outside, "cipher.bin")))
	must(t, os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte(sentinelSecret), 0o644))
	// The healthy content.
	f.enc["d"] = coretest.Mkdir(t, c, f.cipher, "d")
	f.enc["d/sub"] = coretest.Mkdir(t, c, f.cipher, "d/sub")
	for _, p := range []string{"f.txt", "d/inner.txt", longPlain} {
		f.enc[p] = coretest.WriteFile(t, c, f.cipher, p, []byte(insidePlain))
	}
	f.enc["link"] = coretest.Symlink(t, c, f.cipher, "link", "f.txt")
	if !nametransform.IsLongNameFile(f.enc[longPlain] + ".name") {
		t.Fatalf("%q is not stored as a long name", f.enc[longPlain])
	}
	mustRun(t, "cp", "-a", f.abs(longPlain)+".name", filepath.Join(f.outside, "long.name"))
	mustRun(t, "cp", "-a", filepath.Join(f.cipher, nametransform.DirIVFilename), filepath.Join(f.outside, "root.diriv"))
	return f
}

// abs returns the absolute ciphertext path of a plaintext path.
func (f *fixture) abs(plain string) string {
	if plain == "" {
		return f.cipher
	}
	c, ok := f.enc[plain]
	if !ok {
		panic("no ciphertext path for " + plain)
	}
	return filepath.Join(f.cipher, c)
}

// diriv returns the path of the gocryptfs.diriv of plaintext dir plain.
func (f *fixture) diriv(plain string) string {
	return filepath.Join(f.abs(plain), nametransform.DirIVFilename)
}

// conf returns the path of the config file.
func (f *fixture) conf() string { return filepath.Join(f.cipher, "gocryptfs.conf") }

// replace removes the entry at p (of any type) to make room for a planted
// one.
func replace(t *testing.T, p string) {
	t.Helper()
	must(t, os.RemoveAll(p))
}

// mknod replaces p by a device node.
func mknod(t *testing.T, p string, mode uint32, major, minor uint32) {
	t.Helper()
	replace(t, p)
	if err := unix.Mknod(p, mode|0o666, int(unix.Mkdev(major, minor))); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("mknod %s: %v (device-node attacks need root)", p, err)
		}
		t.Fatal(err)
	}
}

// Device numbers of the planted nodes: /dev/zero (an endless stream of
// zeros, which must never be read as an IV, a name or a config) and a
// block device number no driver registers (open fails with ENXIO; a
// component must not open it at all).
const (
	zeroMajor, zeroMinor   = 1, 5
	blockMajor, blockMinor = 240, 17
)

// hugeSize is the size of the sparse huge files: far more than any IV,
// name or config may be.
const hugeSize = 1 << 30

// huge replaces p by a sparse file of hugeSize bytes that starts with
// prefix.
func huge(t *testing.T, p string, prefix []byte) {
	t.Helper()
	replace(t, p)
	must(t, os.WriteFile(p, prefix, 0o644))
	must(t, os.Truncate(p, hugeSize))
}

// attack is one hostile change to CIPHERDIR (or, for -reverse, to the
// plaintext source directory). plant runs on a fresh fixture before the
// sentinel snapshot is taken.
type attack struct {
	name  string
	plant func(t *testing.T, f *fixture)
}

// The attacks. Each component's table picks those that concern it.
var (
	symlinkedDir = attack{"symlinked-dir", func(t *testing.T, f *fixture) {
		replace(t, f.abs("d"))
		must(t, os.Symlink(filepath.Join(f.outside, "encdir"), f.abs("d")))
	}}
	symlinkedFile = attack{"symlinked-file", func(t *testing.T, f *fixture) {
		replace(t, f.abs("f.txt"))
		must(t, os.Symlink(filepath.Join(f.outside, "cipher.bin"), f.abs("f.txt")))
	}}
	symlinkedDirIV = attack{"symlinked-diriv", func(t *testing.T, f *fixture) {
		replace(t, f.diriv("d"))
		must(t, os.Symlink(filepath.Join(f.outside, "encdir", nametransform.DirIVFilename), f.diriv("d")))
	}}
	symlinkedRootDirIV = attack{"symlinked-root-diriv", func(t *testing.T, f *fixture) {
		replace(t, f.diriv(""))
		must(t, os.Symlink(filepath.Join(f.outside, "root.diriv"), f.diriv("")))
	}}
	fifoRootDirIV = attack{"fifo-root-diriv", func(t *testing.T, f *fixture) {
		replace(t, f.diriv(""))
		must(t, unix.Mkfifo(f.diriv(""), 0o666))
	}}
	charDevRootDirIV = attack{"chardev-root-diriv", func(t *testing.T, f *fixture) {
		mknod(t, f.diriv(""), unix.S_IFCHR, zeroMajor, zeroMinor)
	}}
	symlinkedLongName = attack{"symlinked-longname", func(t *testing.T, f *fixture) {
		replace(t, f.abs(longPlain)+".name")
		must(t, os.Symlink(filepath.Join(f.outside, "long.name"), f.abs(longPlain)+".name"))
	}}
	fifoFile = attack{"fifo-file", func(t *testing.T, f *fixture) {
		replace(t, f.abs("f.txt"))
		must(t, unix.Mkfifo(f.abs("f.txt"), 0o666))
	}}
	fifoDirIV = attack{"fifo-diriv", func(t *testing.T, f *fixture) {
		replace(t, f.diriv("d"))
		must(t, unix.Mkfifo(f.diriv("d"), 0o666))
	}}
	fifoLongName = attack{"fifo-longname", func(t *testing.T, f *fixture) {
		replace(t, f.abs(longPlain)+".name")
		must(t, unix.Mkfifo(f.abs(longPlain)+".name", 0o666))
	}}
	charDevFile = attack{"chardev-file", func(t *testing.T, f *fixture) {
		mknod(t, f.abs("f.txt"), unix.S_IFCHR, zeroMajor, zeroMinor)
	}}
	charDevDirIV = attack{"chardev-diriv", func(t *testing.T, f *fixture) {
		mknod(t, f.diriv("d"), unix.S_IFCHR, zeroMajor, zeroMinor)
	}}
	charDevLongName = attack{"chardev-longname", func(t *testing.T, f *fixture) {
		mknod(t, f.abs(longPlain)+".name", unix.S_IFCHR, zeroMajor, zeroMinor)
	}}
	blockDevFile = attack{"blockdev-file", func(t *testing.T, f *fixture) {
		mknod(t, f.abs("f.txt"), unix.S_IFBLK, blockMajor, blockMinor)
	}}
	hardLinkOut = attack{"hardlink-out", func(t *testing.T, f *fixture) {
		replace(t, f.abs("f.txt"))
		must(t, os.Link(filepath.Join(f.outside, "cipher.bin"), f.abs("f.txt")))
	}}
	// A hard link to a damaged file outside: -fsck -repair must not
	// rewrite it in place (that would write outside CIPHERDIR).
	hardLinkOutCorrupt = attack{"hardlink-out-corrupt", func(t *testing.T, f *fixture) {
		replace(t, f.abs("f.txt"))
		must(t, os.Link(filepath.Join(f.outside, "corrupt.bin"), f.abs("f.txt")))
	}}
	hugeDirIV = attack{"huge-diriv", func(t *testing.T, f *fixture) {
		b, err := os.ReadFile(f.diriv("d"))
		must(t, err)
		huge(t, f.diriv("d"), b)
	}}
	hugeLongName = attack{"huge-longname", func(t *testing.T, f *fixture) {
		b, err := os.ReadFile(f.abs(longPlain) + ".name")
		must(t, err)
		huge(t, f.abs(longPlain)+".name", b)
	}}
	truncatedHeader = attack{"truncated-header", func(t *testing.T, f *fixture) {
		must(t, os.Truncate(f.abs("f.txt"), 10))
	}}
	truncatedBlock = attack{"truncated-block", func(t *testing.T, f *fixture) {
		must(t, os.Truncate(f.abs("f.txt"), contentenc.HeaderLen+20))
	}}
)

// Attacks on the directories -fsck -repair writes to, each with a
// damaged f.txt so that the repair has something to move there.
var (
	symlinkedQuarantine = attack{"symlinked-quarantine", func(t *testing.T, f *fixture) {
		testutil.FlipByte(t, f.abs("f.txt"), contentenc.HeaderLen+20, 0x01)
		must(t, os.Mkdir(filepath.Join(f.outside, "q"), 0o755))
		must(t, os.Symlink(filepath.Join(f.outside, "q"), filepath.Join(f.cipher, nametransform.QuarantineDirName)))
	}}
	symlinkedLostFound = attack{"symlinked-lost+found", func(t *testing.T, f *fixture) {
		testutil.FlipByte(t, f.abs("f.txt"), contentenc.HeaderLen+20, 0x01)
		must(t, os.Mkdir(filepath.Join(f.outside, "lf"), 0o755))
		lf := coretest.CipherPath(t, f.core, f.cipher, "lost+found", false)
		must(t, os.Symlink(filepath.Join(f.outside, "lf"), filepath.Join(f.cipher, lf)))
	}}
)

// Attacks on the config file, for every component that reads it.
var (
	symlinkedConf = attack{"symlinked-conf", func(t *testing.T, f *fixture) {
		mustRun(t, "cp", "-a", f.conf(), filepath.Join(f.outside, "gocryptfs.conf"))
		replace(t, f.conf())
		must(t, os.Symlink(filepath.Join(f.outside, "gocryptfs.conf"), f.conf()))
	}}
	fifoConf = attack{"fifo-conf", func(t *testing.T, f *fixture) {
		replace(t, f.conf())
		must(t, unix.Mkfifo(f.conf(), 0o666))
	}}
	charDevConf = attack{"chardev-conf", func(t *testing.T, f *fixture) {
		mknod(t, f.conf(), unix.S_IFCHR, zeroMajor, zeroMinor)
	}}
	hugeConf = attack{"huge-conf", func(t *testing.T, f *fixture) {
		b, err := os.ReadFile(f.conf())
		must(t, err)
		huge(t, f.conf(), b)
	}}
	// The temporary file a config write goes through, planted as a
	// symlink to a file outside.
	symlinkedConfTmp = attack{"symlinked-conf-tmp", func(t *testing.T, f *fixture) {
		must(t, os.WriteFile(filepath.Join(f.outside, "victim"), []byte("victim"), 0o644))
		must(t, os.Symlink(filepath.Join(f.outside, "victim"), f.conf()+".tmp"))
	}}
	truncatedConf = attack{"truncated-conf", func(t *testing.T, f *fixture) {
		b, err := os.ReadFile(f.conf())
		must(t, err)
		must(t, os.Chmod(f.conf(), 0o600))
		must(t, os.WriteFile(f.conf(), b[:len(b)/2], 0o400))
	}}
)

// harness runs one case: a fresh fixture, the plant, the sentinel
// snapshot, the body, then the checks every case shares: the sentinel
// tree is unchanged and no plaintext is in clear below CIPHERDIR.
// Subtests run in parallel: the cases are independent, each in its own
// temp dirs.
func harness(t *testing.T, a attack, body func(t *testing.T, f *fixture)) {
	t.Helper()
	t.Run(a.name, func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		a.plant(t, f)
		before := testutil.TreeSum(t, f.outside)
		body(t, f)
		if testutil.TreeSum(t, f.outside) != before {
			t.Errorf("%s: the sentinel directory outside CIPHERDIR changed", a.name)
		}
		noPlaintextBelow(t, f.cipher)
	})
}

// noPlaintextBelow fails the test if a regular file below dir holds
// insidePlain or sentinelSecret in clear, or an entry's name contains
// either: a component wrote plaintext into the storage. Symlinks are not
// followed; files larger than 16 MiB (the sparse huge plants) are
// skipped.
func noPlaintextBelow(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), insidePlain) || strings.Contains(d.Name(), sentinelSecret) {
			t.Errorf("plaintext in a name below CIPHERDIR: %s", p)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Size() > 16<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(insidePlain)) || bytes.Contains(b, []byte(sentinelSecret)) {
			t.Errorf("plaintext in clear below CIPHERDIR: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Errorf("walking %s: %v", dir, err)
	}
}

// treeState describes every entry below dir without following symlinks
// (path, mode, owner, size, link count, mtime, ctime; the content of
// regular files up to 16 MiB; symlink targets), so that equal states
// before and after a run prove the run changed nothing. Unlike
// testutil.TreeSum it does not read the sparse 1 GiB plants: their
// ctime and size show any write.
func treeState(t *testing.T, dir string) string {
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
		fmt.Fprintf(h, "%s %o %d:%d %d %d %d.%d %d.%d\n", p, st.Mode, st.Uid, st.Gid, st.Size, st.Nlink,
			st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		switch {
		case d.Type().IsRegular() && st.Size <= 16<<20:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintln(h, s)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("describing %s: %v", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}
