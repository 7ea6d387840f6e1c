package fusefrontend

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenSwappedFifo: a regular file whose backing entry was replaced by
// a FIFO (by someone with write access to CIPHERDIR) while the kernel
// still has it cached as a regular file must fail to open, not hang the
// request waiting for a FIFO writer. Also covers truncate by path and
// fsync of a directory whose backing entry became a FIFO.
func TestOpenSwappedFifo(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true})
	for _, c := range []struct {
		name string
		op   func(p string) error
	}{
		{"open-rdonly", func(p string) error {
			f, err := os.Open(p)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"open-rdwr", func(p string) error {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"truncate", func(p string) error { return os.Truncate(p, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := tf.path(c.name)
			mustWrite(t, p, []byte("data"))
			if _, err := os.Stat(p); err != nil { // cache the entry as a regular file
				t.Fatal(err)
			}
			cName, err := tf.rn.EncryptPath(c.name)
			if err != nil {
				t.Fatal(err)
			}
			backing := filepath.Join(tf.cipher, cName)
			if err := os.Remove(backing); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(backing, 0o666); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.op(p) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("operation on a file swapped for a FIFO succeeded")
				}
			case <-time.After(5 * time.Second):
				// Unblock the stuck request so that the mount can go away.
				if fd, err := unix.Open(backing, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					unix.Close(fd)
				}
				<-done
				t.Fatal("operation hung on a FIFO swapped into CIPHERDIR")
			}
		})
	}
	t.Run("fsyncdir", func(t *testing.T) {
		p := tf.path("dir")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		d, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		cName, err := tf.rn.EncryptPath("dir")
		if err != nil {
			t.Fatal(err)
		}
		backing := filepath.Join(tf.cipher, cName)
		if err := os.RemoveAll(backing); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(backing, 0o666); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- d.Sync() }()
		select {
		case err := <-done:
			// The open directory handle holds the backing directory
			// that was opened, so fsync syncs that one (now
			// removed, which succeeds as on ext4) and never opens
			// the FIFO.
			if err != nil {
				t.Fatalf("fsync of the open directory: %v", err)
			}
		case <-time.After(5 * time.Second):
			if fd, err := unix.Open(backing, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
			<-done
			t.Fatal("fsync hung on a FIFO swapped into CIPHERDIR")
		}
	})
}
