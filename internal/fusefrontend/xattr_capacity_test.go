package fusefrontend

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// xattrCapacityCap bounds the count: XFS keeps attributes in their own
// B-tree and takes far more than anyone would set on one file.
const xattrCapacityCap = 2000

// countXattrs sets user.attrNNNN = "value-NNNN" on a new file in dir until
// the filesystem refuses (ENOSPC, E2BIG) or the cap is reached.
func countXattrs(t *testing.T, dir string) int {
	t.Helper()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range xattrCapacityCap {
		err := unix.Setxattr(p, fmt.Sprintf("user.attr%04d", i), []byte(fmt.Sprintf("value-%04d", i)), 0)
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.E2BIG) {
			return i
		}
		if err != nil {
			t.Fatalf("setxattr %d: %v", i, err)
		}
	}
	return xattrCapacityCap
}

// mountImage makes a filesystem image of kind (ext4, xfs) with mkfs and
// loop-mounts it on a temp dir.
func mountImage(t *testing.T, kind string, sizeMB int) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), kind+".img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		t.Fatal(err)
	}
	args := []string{"-q", img}
	if kind == "ext4" {
		// Small images get 1 KiB blocks by default; use what a disk
		// gets (and the inode size of the default, 256 bytes).
		args = []string{"-q", "-b", "4096", "-I", "256", img}
	}
	if out, err := exec.Command("mkfs."+kind, args...).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.%s: %v: %s", kind, err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("loop mount of %s image: %v: %s (needs root and loop devices)", kind, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestXattrCapacity measures how many small extended attributes (13-byte
// names, 10-byte values) one file holds on ext4 and XFS, directly and
// through a mount whose CIPHERDIR is on the same filesystem (README,
// "Extended attributes"). The encrypted form is fixed by the format:
// user.gocryptfs. plus the base64 of the EME-encrypted padded name, and
// the value with a 16-byte nonce and a 16-byte tag. On ext4 everything
// must fit into the inode and one block, so the mount holds fewer; the
// expected counts are those of the formats.
func TestXattrCapacity(t *testing.T) {
	testutil.RequireFuse(t)
	for _, c := range []struct {
		kind         string
		sizeMB       int
		plain, mount int
	}{
		{"ext4", 32, 114, 44},
		{"xfs", 320, xattrCapacityCap, xattrCapacityCap},
	} {
		t.Run(c.kind, func(t *testing.T) {
			fsDir := mountImage(t, c.kind, c.sizeMB)
			plainDir := filepath.Join(fsDir, "plain")
			cipherDir := filepath.Join(fsDir, "cipher")
			for _, d := range []string{plainDir, cipherDir} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			plain := countXattrs(t, plainDir)
			tf := mountExisting(t, testConfig{}, cipherDir, true)
			mnt := countXattrs(t, tf.mnt)
			t.Logf("%s: %d xattrs directly, %d through the mount", c.kind, plain, mnt)
			if plain != c.plain || mnt != c.mount {
				t.Errorf("%s: got %d directly and %d through the mount, want %d and %d", c.kind, plain, mnt, c.plain, c.mount)
			}
		})
	}
}
