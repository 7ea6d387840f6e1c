package fusefrontend_reverse

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpenSwappedFifo: a plaintext file replaced by a FIFO after the
// kernel cached it as a regular file must not be opened at all. Opening a
// FIFO, even with O_NONBLOCK, is observable: it wakes a writer blocked in
// open(2), which the test plays.
func TestOpenSwappedFifo(t *testing.T) {
	plain := t.TempDir()
	p := filepath.Join(plain, "f")
	mustWriteFile(t, p, []byte("data"))
	m, rn := mountReverse(t, tv14Config(), Args{PlainDir: plain})
	enc, err := rn.EncryptPath("f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.path(enc)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o666); err != nil {
		t.Fatal(err)
	}
	writerDone := make(chan struct{})
	go func() {
		if fd, err := unix.Open(p, unix.O_WRONLY, 0); err == nil {
			unix.Close(fd)
		}
		close(writerDone)
	}()
	t.Cleanup(func() {
		// Release the writer if it is still waiting.
		if fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			<-writerDone
			unix.Close(fd)
		}
	})
	time.Sleep(100 * time.Millisecond) // let the writer block in open
	// O_NONBLOCK: once the kernel's entry cache has expired (a loaded
	// machine), the view itself shows a FIFO, and the kernel opens that
	// locally without asking the filesystem; a blocking open would then
	// wait for a writer forever. Only an open regular file is wrong.
	if fd, err := unix.Open(m.path(enc), unix.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			t.Errorf("opening a file that became a FIFO succeeded (mode %o, fstat error %v)", st.Mode, err)
		}
		unix.Close(fd)
	}
	select {
	case <-writerDone:
		t.Fatal("the mount opened the FIFO (a blocked writer woke up)")
	case <-time.After(200 * time.Millisecond):
	}
}
