// Package sync_test runs the gocryptfs binary where several machines meet
// through one ciphertext directory: two -sharedstorage mounts writing one
// file at once (on a local directory and on sshfs to this machine's own
// sshd), two Syncthing instances syncing two copies of a CIPHERDIR, and a
// CIPHERDIR on a WebDAV remote through rclone mount (rclone serving a local
// directory). Everything talks to 127.0.0.1 only. Tests that need sshd,
// sshfs, syncthing or rclone fail when the tool is missing
// (install-deps.bash --test installs them); they skip only without /dev/fuse.
package sync_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// gocryptfsBin is the binary under test, built by TestMain.
var gocryptfsBin string

// writerEnv makes the test binary act as one writer process (see
// runWriter) instead of running tests.
const writerEnv = "GOCRYPTFS_TEST_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		if err := runWriter(spec); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testutil.RunWithBinaries(m, testutil.Build{Packages: []string{"."}, Version: "v0.0.0-synctest", Date: "2001-02-03"},
		func(dir string) { gocryptfsBin = filepath.Join(dir, "gocryptfs") }))
}

// piece is one byte range of the shared file and the writer that owns it.
type piece struct {
	off, len int
	writer   int
}

// pieces splits [0, size) into ranges of 1..maxLen bytes, alternately
// owned by writer 0 and 1, so that most 4 KiB blocks hold ranges of both.
func pieces(seed uint64, size, maxLen int) []piece {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []piece
	for off, w := 0, 0; off < size; w ^= 1 {
		l := min(1+r.IntN(maxLen), size-off)
		out = append(out, piece{off, l, w})
		off += l
	}
	return out
}

// pattern is the content a round gives byte i.
func pattern(round, i int) byte { return byte(i*7 + round*13 + i/4096) }

// expected returns the file contents after round.
func expected(round, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = pattern(round, i)
	}
	return b
}

// runWriter writes the pieces of one writer for one round into a file:
// spec is "path,writer,round,seed,size,maxLen". The pieces go out in a
// shuffled order, one pwrite each.
func runWriter(spec string) error {
	var path string
	var w, round, size, maxLen int
	var seed uint64
	fields := splitComma(spec)
	if len(fields) != 6 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path = fields[0]
	nums := make([]int, 5)
	for i, f := range fields[1:] {
		v, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("bad spec %q: %w", spec, err)
		}
		nums[i] = v
	}
	w, round, seed, size, maxLen = nums[0], nums[1], uint64(nums[2]), nums[3], nums[4]
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var mine []piece
	for _, p := range pieces(seed, size, maxLen) {
		if p.writer == w {
			mine = append(mine, p)
		}
	}
	r := rand.New(rand.NewPCG(seed, uint64(w)+7))
	r.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
	want := expected(round, size)
	for _, p := range mine {
		// Not retried on EINTR: with -sharedstorage a write waiting for
		// the other mount's lock goes on waiting through the Go
		// runtime's signals (SIGURG), as on a local filesystem.
		n, err := unix.Pwrite(fd, want[p.off:p.off+p.len], int64(p.off))
		if err != nil || n != p.len {
			return fmt.Errorf("pwrite %d+%d: %d, %v", p.off, p.len, n, err)
		}
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
