// Package interop_test checks on-disk compatibility with the reference
// implementation, Debian's gocryptfs 2.3 at /usr/bin/gocryptfs, in both
// directions: a directory that one implementation creates and fills
// through its mount is mounted by the other and compared in full (and
// written through it and read back with the first); each implementation's
// -fsck must accept the other's output; in reverse mode both must show
// the same encrypted view of a plaintext directory, which the other
// implementation then decrypts. Our binary is built once in TestMain and
// always run by its explicit path, the reference always as
// /usr/bin/gocryptfs. The tests skip only when /dev/fuse is absent; a
// missing reference fails them (CI installs it with install-deps.bash --test).
package interop_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gocryptfs/internal/testutil"
)

// impl is one implementation under comparison.
type impl struct {
	name string // "ours" or "ref", for subtest names and messages
	bin  string // absolute path of its gocryptfs binary
	xray string // absolute path of its gocryptfs-xray binary
}

// impls holds our binary (built by TestMain) and the reference.
type impls struct{ ours, ref impl }

// theImpls is filled in by TestMain.
var theImpls impls

func TestMain(m *testing.M) {
	b := testutil.Build{Packages: []string{".", "./gocryptfs-xray"}, Version: "v0.0.0-interoptest", Date: "2001-02-03"}
	os.Exit(testutil.RunWithBinaries(m, b, func(dir string) {
		theImpls = impls{
			ours: impl{name: "ours", bin: filepath.Join(dir, "gocryptfs"), xray: filepath.Join(dir, "gocryptfs-xray")},
			ref:  impl{name: "ref", bin: testutil.ReferenceBin, xray: testutil.ReferenceXray},
		}
	}))
}

// setup skips without /dev/fuse, fails (with a message saying how to get
// it) without the reference binary, and returns both implementations.
func setup(t *testing.T) impls {
	t.Helper()
	testutil.RequireFuse(t)
	testutil.RequireReference(t)
	r := testutil.Run(t, testutil.RunOptions{}, testutil.ReferenceBin, "-version")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "gocryptfs 2.") {
		t.Fatalf("%s -version: want exit 0 and \"gocryptfs 2.x\", got %v", testutil.ReferenceBin, r)
	}
	t.Logf("reference: %s", strings.TrimSpace(r.Stdout))
	return theImpls
}

// passArgs returns the password arguments i uses: the reference reads a
// password file, ours runs an external program, so both ways are covered
// on both sides of every pair.
func (i impl) passArgs(t *testing.T) []string {
	t.Helper()
	return i.passArgsFor(t, testutil.Password)
}

// passArgsFor is passArgs with password pw.
func (i impl) passArgsFor(t *testing.T, pw string) []string {
	t.Helper()
	if i.bin != testutil.ReferenceBin {
		return []string{"-extpass", "echo " + pw}
	}
	p := filepath.Join(t.TempDir(), "passfile")
	if err := os.WriteFile(p, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"-passfile", p}
}

// run runs i with args and fails the test unless it exits 0. The
// reference prints notices and warnings on stderr; only the exit code
// counts.
func (i impl) run(t *testing.T, args ...string) testutil.Result {
	t.Helper()
	r := testutil.Run(t, testutil.RunOptions{}, i.bin, args...)
	if r.Code != 0 {
		t.Fatalf("%s %q: %v", i.name, args, r)
	}
	return r
}

// initDir runs -init (with the cheapest scrypt and flags) on dir, which
// must exist.
func (i impl) initDir(t *testing.T, dir string, flags ...string) {
	t.Helper()
	args := append([]string{"-init", "-scryptn", "10"}, i.passArgs(t)...)
	i.run(t, append(append(args, flags...), dir)...)
}

// mount mounts cipherdir with args (which must unlock it) on a new
// directory, daemonized, so the call returns once the mount is ready;
// registers its unmount (fusermount3 -u with retries, then a lazy
// detach) in t.Cleanup and returns the mount point.
func (i impl) mount(t *testing.T, cipherdir string, args ...string) string {
	t.Helper()
	return testutil.MountFS(t, i.bin, cipherdir, args...)
}

// fsck runs i -fsck on cipherdir with args (which must unlock it) and
// fails the test unless it exits 0.
func (i impl) fsck(t *testing.T, cipherdir string, args ...string) {
	t.Helper()
	i.run(t, append(append([]string{"-fsck"}, args...), cipherdir)...)
}

// pairs are the two directions: the first implementation creates, the
// second reads.
func (is impls) pairs() [][2]impl {
	return [][2]impl{{is.ours, is.ref}, {is.ref, is.ours}}
}

// parallelism is how many subtests of runModes run at once: each keeps
// two or three FUSE daemons busy, and CI has two cores.
const parallelism = 2

// roundTrip is one mode in one direction; it returns the number of field
// checks and of entries compared.
type roundTrip func(t *testing.T) (checks, entries int)

// runModes runs the round trip that each returns for every mode and both
// pairs of implementations (unless it returns nil) as parallel subtests
// named mode/name, at most parallelism at once, and logs the totals (what
// tells the pairs apart is what).
func runModes(t *testing.T, modes []mode, what string, each func(m mode, pair [2]impl) (name string, rt roundTrip)) {
	t.Helper()
	sem := make(chan struct{}, parallelism)
	var checks, entries atomic.Int64
	t.Run("group", func(t *testing.T) {
		for _, m := range modes {
			for _, pair := range theImpls.pairs() {
				name, rt := each(m, pair)
				if rt == nil {
					continue
				}
				t.Run(m.name+"/"+name, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					n, e := rt(t)
					checks.Add(int64(n))
					entries.Add(int64(e))
				})
			}
		}
	})
	t.Logf("%d modes x 2 %s: %d entries scanned, %d field checks", len(modes), what, entries.Load(), checks.Load())
}
