package interop_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// TestPasswd changes the password of a directory made by one
// implementation with the other and checks that the first accepts the
// new password and refuses the old one with exit code 12. Both passwords
// come on stdin, the one way both read them alike: given -passfile or
// -extpass, 2.3 takes the new password from there as well (so it does
// not change), while ours, as newer reference versions, reads it from
// stdin.
func TestPasswd(t *testing.T) {
	is := setup(t)
	for _, pair := range is.pairs() {
		creator, changer := pair[0], pair[1]
		t.Run(creator.name+"-to-"+changer.name, func(t *testing.T) {
			cipher := testutil.NewDir(t, "cipher")
			creator.initDir(t, cipher)
			r := testutil.Run(t, testutil.RunOptions{Stdin: testutil.Password + "\nnewpw\n"}, changer.bin, "-passwd", cipher)
			testutil.Expect(t, r, 0)
			creator.fsck(t, cipher, creator.passArgsFor(t, "newpw")...)
			r = testutil.Run(t, testutil.RunOptions{}, creator.bin, append(append([]string{"-fsck"}, creator.passArgs(t)...), cipher)...)
			testutil.Expect(t, r, 12)
			// And back, by the creator: the changer reads the result.
			r = testutil.Run(t, testutil.RunOptions{Stdin: "newpw\n" + testutil.Password + "\n"}, creator.bin, "-passwd", cipher)
			testutil.Expect(t, r, 0)
			changer.fsck(t, cipher, changer.passArgs(t)...)
		})
	}
}

// TestLimits runs the same operations at the limits of the format on a
// mount by each implementation of the same directory (made by the
// reference, then copied, so that both have the same key and directory
// IVs) and checks that both give the same results: the longest symlink
// target, xattr name and xattr value that fit, names of 255 and 256
// bytes; and fallocate and device nodes. Each kind of limit must have been passed and
// missed at least once, so that it really lies in the probed range.
func TestLimits(t *testing.T) {
	is := setup(t)
	for _, m := range []mode{forwardModes[0], forwardModes[2], forwardModes[3]} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			cipherRef := testutil.NewDir(t, "cipher")
			is.ref.initDir(t, cipherRef, m.flags...)
			cipherOurs := filepath.Join(t.TempDir(), "cipher")
			if out, err := exec.Command("cp", "-a", cipherRef, cipherOurs).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v: %s", err, out)
			}
			results := map[string]map[string]string{}
			for _, c := range []struct {
				i      impl
				cipher string
			}{{is.ref, cipherRef}, {is.ours, cipherOurs}} {
				mnt := c.i.mount(t, c.cipher, c.i.passArgs(t)...)
				results[c.i.name] = probeLimits(t, mnt)
				testutil.UnmountDir(t, mnt)
			}
			ref, ours := results["ref"], results["ours"]
			outcomes := map[string]map[bool]bool{}
			for k, want := range ref {
				if ours[k] != want {
					t.Errorf("%s: ref gives %s, ours %s", k, want, ours[k])
				}
				family := strings.SplitN(k, " ", 2)[0]
				if outcomes[family] == nil {
					outcomes[family] = map[bool]bool{}
				}
				outcomes[family][want == "ok"] = true
			}
			for family, o := range outcomes {
				if family != "node" && family != "fallocate" && (!o[true] || !o[false]) {
					t.Errorf("%s: all probes gave the same result %v; the limit is not in the probed range", family, o)
				}
			}
			t.Logf("%d probes agree", len(ref))
		})
	}
}

// probeLimits runs the limit probes below mnt and returns each one's
// result: "ok" or the errno name.
func probeLimits(t *testing.T, mnt string) map[string]string {
	t.Helper()
	res := map[string]string{}
	record := func(key string, err error) {
		var errno syscall.Errno
		switch {
		case err == nil:
			res[key] = "ok"
		case errors.As(err, &errno):
			res[key] = unix.ErrnoName(errno)
		default:
			t.Fatalf("%s: %v", key, err)
		}
	}
	p := func(name string) string { return filepath.Join(mnt, name) }
	// The encrypted target must fit the backing file system's 4095 bytes.
	// With plaintext names the target passes through: 4095 bytes is the
	// kernel's limit.
	for _, r := range [][2]int{{2960, 3080}, {4090, 4096}} {
		for n := r[0]; n <= r[1]; n++ {
			record(fmt.Sprintf("symlink %04d", n), os.Symlink(strings.Repeat("t", n), p(fmt.Sprintf("s%d", n))))
		}
	}
	for n := 250; n <= 256; n++ {
		record(fmt.Sprintf("name %d", n), os.WriteFile(p(strings.Repeat("n", n)), nil, 0o644))
	}
	if err := os.WriteFile(p("x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The encrypted xattr name must fit 255 bytes.
	for n := 160; n <= 190; n++ {
		record(fmt.Sprintf("xattrname %d", n), unix.Setxattr(p("x"), "user."+strings.Repeat("k", n-5), []byte("v"), 0))
	}
	// The encrypted value must fit ext4's xattr space; a new file each,
	// since the space is shared by a file's xattrs.
	for n := 3700; n <= 4100; n += 8 {
		name := fmt.Sprintf("xv%d", n)
		if err := os.WriteFile(p(name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		record(fmt.Sprintf("xattrvalue %d", n), unix.Setxattr(p(name), "user.v", make([]byte, n), 0))
	}
	// Not limits: the same result is all that counts.
	for _, mode := range []uint32{0, unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_ZERO_RANGE} {
		name := fmt.Sprintf("fa%d", mode)
		if err := os.WriteFile(p(name), make([]byte, 4100), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p(name), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("fallocate mode %#x", mode)
		record(key, unix.Fallocate(int(f.Fd()), mode, 4000, 10000))
		f.Close()
		fi, err := os.Stat(p(name))
		if err != nil {
			t.Fatal(err)
		}
		res[key] += fmt.Sprint(", size ", fi.Size())
	}
	record("node chr", unix.Mknod(p("chr"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	record("node fifo", unix.Mknod(p("fifo"), unix.S_IFIFO|0o600, 0))
	record("node sock", unix.Mknod(p("sock"), unix.S_IFSOCK|0o600, 0))
	return res
}
