//go:build linux

package fusefrontend

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseAfterUnlink (issue 19, finding 4): close(2) and fsync(2) of a
// read-only descriptor of an unlinked file succeed (with the writeback
// cache, as the binary mounts). Under the writeback
// cache the kernel writes its times back with a SETATTR without a handle;
// an error answer was recorded as a write error of the inode, and close
// returned EIO.
func TestCloseAfterUnlink(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true, writeback: true})
	p := tf.path("f")
	for _, op := range []string{"close", "fsync"} {
		mustWrite(t, p, []byte("hello"))
		fd, err := unix.Open(p, unix.O_RDONLY, 0)
		must(t, err)
		must(t, unix.Unlink(p))
		if op == "fsync" {
			if err := unix.Fsync(fd); err != nil {
				t.Errorf("fsync of an unlinked file: %v", err)
			}
			buf := make([]byte, 10)
			if n, err := unix.Pread(fd, buf, 0); err != nil || string(buf[:n]) != "hello" {
				t.Errorf("read of an unlinked file: %q, %v", buf[:max(n, 0)], err)
			}
		}
		if err := unix.Close(fd); err != nil {
			t.Errorf("%s: close of an unlinked file: %v", op, err)
		}
	}
}

// TestInodeNumberReused (issue 19, finding 4), with the writeback cache
// as the binary mounts: a file created with the
// inode number of a just removed file whose inode the kernel still holds
// (here pinned by an O_PATH descriptor) is a new file to the kernel: size
// 0, no content, and closing it reports no error. (It is shown under an
// inode number of its own while the old node lives.) The backing filesystem
// (ext4 takes the lowest free inode number) hands the number out again at
// once; the test needs that to happen at least once in 50 tries.
func TestInodeNumberReused(t *testing.T) {
	// Plaintext names: the backing files are found by name.
	tf := mountFS(t, testConfig{plaintextNames: true, timeouts: true, writeback: true})
	reused := 0
	for i := range 50 {
		old, neu := tf.path("old"), tf.path("new")
		mustWrite(t, old, []byte("content of the removed file"))
		var st unix.Stat_t
		must(t, unix.Stat(filepath.Join(tf.cipher, "old"), &st))
		pin, err := unix.Open(old, unix.O_PATH, 0)
		must(t, err)
		must(t, unix.Unlink(old))
		fd, err := unix.Open(neu, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o644)
		must(t, err)
		var nst, bst unix.Stat_t
		must(t, unix.Fstat(fd, &nst))
		must(t, unix.Stat(filepath.Join(tf.cipher, "new"), &bst))
		if bst.Ino == st.Ino {
			reused++
			if nst.Size != 0 {
				t.Errorf("try %d: new file with a reused inode number has size %d", i, nst.Size)
			}
			buf := make([]byte, 64)
			if n, err := unix.Pread(fd, buf, 0); n != 0 || err != nil {
				t.Errorf("try %d: new file reads %q, %v", i, buf[:max(n, 0)], err)
			}
		}
		if err := unix.Close(fd); err != nil {
			t.Errorf("try %d: close of the new file: %v", i, err)
		}
		unix.Close(pin)
		must(t, os.Remove(neu))
	}
	t.Logf("inode number reused %d times in 50", reused)
	if reused == 0 {
		t.Fatal("the backing filesystem never reused an inode number")
	}
}
