package hostile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// reverseConf is the config of a reverse filesystem, in its plaintext
// source directory.
const reverseConf = ".gocryptfs.reverse.conf"

// reverseAttack is a hostile change to the plaintext source directory of
// a -reverse mount (plain, holding f.txt, d/inner.txt and the config)
// with outside holding secret.txt and dir/secret.txt.
type reverseAttack struct {
	name  string
	plant func(t *testing.T, plain, outside string)
	// mountCode is the exit code of the mount; 0: it mounts and the walks
	// run.
	mountCode int
	mountWant string
	// check, if set, runs on the mounted encrypted view of plain before
	// the walks (in a goroutine: it reports with t.Errorf only).
	check func(t *testing.T, plain, view string)
}

var reverseCases = []reverseAttack{
	// Symlinks are shown as symlinks (with encrypted targets), never
	// followed: the outside content is in neither view.
	{"symlinked-dir", func(t *testing.T, plain, outside string) {
		must(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(plain, "d2")))
	}, 0, "", nil},
	{"symlinked-file", func(t *testing.T, plain, outside string) {
		must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(plain, "f2.txt")))
	}, 0, "", nil},
	// Special files are shown as what they are, never opened.
	{"fifo-file", func(t *testing.T, plain, outside string) {
		must(t, unix.Mkfifo(filepath.Join(plain, "fifo"), 0o666))
	}, 0, "", nil},
	{"chardev-file", func(t *testing.T, plain, outside string) {
		mknod(t, filepath.Join(plain, "zero"), unix.S_IFCHR, zeroMajor, zeroMinor)
	}, 0, "", nil},
	{"blockdev-file", func(t *testing.T, plain, outside string) {
		mknod(t, filepath.Join(plain, "blk"), unix.S_IFBLK, blockMajor, blockMinor)
	}, 0, "", nil},
	// The config: refused at once when it is a FIFO, a device or huge.
	{"fifo-conf", func(t *testing.T, plain, outside string) {
		replace(t, filepath.Join(plain, reverseConf))
		must(t, unix.Mkfifo(filepath.Join(plain, reverseConf), 0o666))
	}, 11, "not a regular file", nil},
	{"chardev-conf", func(t *testing.T, plain, outside string) {
		mknod(t, filepath.Join(plain, reverseConf), unix.S_IFCHR, zeroMajor, zeroMinor)
	}, 11, "not a regular file", nil},
	{"huge-conf", func(t *testing.T, plain, outside string) {
		b, err := os.ReadFile(filepath.Join(plain, reverseConf))
		must(t, err)
		huge(t, filepath.Join(plain, reverseConf), b)
	}, 11, "larger than 1048576 bytes", nil},
	// The user keeps the config elsewhere and links it in (the config is
	// read through the link, as the reference does): the view must show
	// it as a regular gocryptfs.conf with the bytes that were loaded, so
	// that a copy of the view can be mounted. (It used to be listed as a
	// symlink that could not be looked up.)
	{name: "symlinked-conf", plant: func(t *testing.T, plain, outside string) {
		moved := filepath.Join(testutil.NewDir(t, "else"), "rev.conf")
		must(t, os.Rename(filepath.Join(plain, reverseConf), moved))
		must(t, os.Symlink(moved, filepath.Join(plain, reverseConf)))
	}, check: checkViewConf},
}

// checkViewConf checks the view's gocryptfs.conf: a regular file in the
// listing and on lookup, with the bytes of plain's config (read through
// its symlink). It runs in a goroutine under within: no t.Fatal.
func checkViewConf(t *testing.T, plain, view string) {
	want, err := os.ReadFile(filepath.Join(plain, reverseConf))
	if err != nil {
		t.Errorf("reading the source's config: %v", err)
		return
	}
	ents, err := os.ReadDir(view)
	if err != nil {
		t.Errorf("listing the view: %v", err)
		return
	}
	listed := false
	for _, e := range ents {
		if e.Name() == "gocryptfs.conf" {
			listed = true
			if !e.Type().IsRegular() {
				t.Errorf("gocryptfs.conf is listed as %v, want a regular file", e.Type())
			}
		}
	}
	if !listed {
		t.Errorf("gocryptfs.conf is not listed in the view")
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(view, "gocryptfs.conf"), &st); err != nil {
		t.Errorf("lstat gocryptfs.conf in the view: %v", err)
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != int64(len(want)) {
		t.Errorf("gocryptfs.conf in the view: mode %o size %d, want a regular file of %d bytes", st.Mode, st.Size, len(want))
	}
	got, err := os.ReadFile(filepath.Join(view, "gocryptfs.conf"))
	if err != nil {
		t.Errorf("reading gocryptfs.conf in the view: %v", err)
	} else if string(got) != string(want) {
		t.Errorf("gocryptfs.conf in the view differs from the loaded config:\n%s\nwant\n%s", got, want)
	}
}

// TestReverseMount plants each attack into a -reverse source directory,
// mounts it, walks the encrypted view, then mounts that view forward and
// walks the decrypted result: nothing hangs, nothing outside changes, and
// the outside secret appears in neither view.
func TestReverseMount(t *testing.T) {
	for _, c := range reverseCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			plain := testutil.NewDir(t, "plain")
			outside := testutil.NewDir(t, "outside")
			must(t, os.WriteFile(filepath.Join(plain, "f.txt"), []byte(insidePlain), 0o644))
			must(t, os.Mkdir(filepath.Join(plain, "d"), 0o755))
			must(t, os.WriteFile(filepath.Join(plain, "d", "inner.txt"), []byte(insidePlain), 0o644))
			must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(sentinelSecret), 0o644))
			must(t, os.Mkdir(filepath.Join(outside, "dir"), 0o755))
			must(t, os.WriteFile(filepath.Join(outside, "dir", "secret.txt"), []byte(sentinelSecret), 0o644))
			expect(t, "-init -reverse", gocryptfs(t, append(append([]string{"-init", "-reverse", "-q", "-scryptn", "10"}, pw...), plain)...), 0)
			c.plant(t, plain, outside)
			before := testutil.TreeSum(t, outside)
			defer func() {
				if testutil.TreeSum(t, outside) != before {
					t.Error("the sentinel directory outside the source changed")
				}
			}()

			view, conn, r := mountWithin(t, plain, append([]string{"-reverse"}, pw...)...)
			if c.mountCode != 0 {
				expect(t, "reverse mount", r, c.mountCode, c.mountWant)
				return
			}
			if view == "" {
				t.Fatalf("reverse mount failed: %v", r)
			}
			if c.check != nil {
				within(t, view, conn, "check of the reverse view", func() { c.check(t, plain, view) })
			}
			var w *walkResult
			within(t, view, conn, "walk of the reverse view", func() { w = walkMount(view) })
			checkReadOnlyWalk(t, "reverse view", w)
			if err := w.errs["create ."]; !errors.Is(err, syscall.EROFS) {
				t.Errorf("creating in the reverse view: %v, want EROFS", err)
			}
			noPlaintextBelow(t, view)

			fwd, conn2, r := mountWithin(t, view, pw...)
			if fwd == "" {
				t.Fatalf("forward mount of the reverse view failed: %v", r)
			}
			within(t, fwd, conn2, "walk of the decrypted view", func() { w = walkMount(fwd) })
			noSecretIn(t, "decrypted reverse view", w.seen.String())
			if !strings.Contains(w.seen.String(), insidePlain) {
				t.Errorf("the decrypted view lacks the source's own content:\n%s", w.seen.String())
			}
			checkReadOnlyWalk(t, "decrypted view", w)
			testutil.UnmountDir(t, fwd)
			testutil.UnmountDir(t, view)
		})
	}
}

// checkReadOnlyWalk fails the test for any error of a walk of a
// read-only view other than EROFS for the writes and ENOENT for the
// fixed plaintext names walkMount tries (f.txt, d, link, ...), which the
// encrypted view does not have and the decrypted one partly lacks.
func checkReadOnlyWalk(t *testing.T, what string, w *walkResult) {
	t.Helper()
	for k, err := range w.errs {
		op, path, _ := strings.Cut(k, " ")
		write := op == "create" || op == "mkdir" || op == "symlink"
		fixed := path == "f.txt" || path == "d" || path == "d/inner.txt" || path == "link" || path == longPlain
		switch {
		case write && errors.Is(err, syscall.EROFS):
		case fixed && errors.Is(err, syscall.ENOENT):
		default:
			t.Errorf("%s: %s: %v", what, k, err)
		}
	}
}
