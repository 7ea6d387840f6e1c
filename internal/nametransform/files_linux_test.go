package nametransform

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMetadataFilesNeverOpenSpecial plants a FIFO and a device node in
// place of gocryptfs.diriv and of a .name file and checks with inotify that
// reading them never opens them: opening a FIFO would wake a writer blocked
// on it, opening a device node runs its driver's open routine. O_PATH
// handles, which the readers may use to look at the entry, raise no
// IN_OPEN event.
func TestMetadataFilesNeverOpenSpecial(t *testing.T) {
	const h = "gocryptfs.longname.abc"
	kinds := []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"device", func(p string) error {
			// A character device like /dev/null (1, 3); needs CAP_MKNOD.
			return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3)))
		}},
	}
	files := []struct {
		name string
		file string
		read func(fd int) error
	}{
		{"diriv", DirIVFilename, func(fd int) error { _, err := ReadDirIVAt(fd); return err }},
		{"longname", h + LongNameSuffix, func(fd int) error { _, err := ReadLongNameAt(fd, h); return err }},
	}
	for _, k := range kinds {
		for _, f := range files {
			t.Run(k.name+"/"+f.name, func(t *testing.T) {
				dir, fd := openDir(t)
				p := filepath.Join(dir, f.file)
				if err := k.make(p); err != nil {
					if errors.Is(err, syscall.EPERM) {
						t.Skip("cannot create device nodes here:", err)
					}
					t.Fatal(err)
				}
				ifd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(ifd)
				if _, err := unix.InotifyAddWatch(ifd, p, unix.IN_OPEN); err != nil {
					t.Fatal(err)
				}
				if err := f.read(fd); !errors.Is(err, syscall.EIO) {
					t.Errorf("read = %v, want EIO", err)
				}
				buf := make([]byte, 4096)
				if n, err := unix.Read(ifd, buf); err != syscall.EAGAIN {
					t.Errorf("the %s was opened (inotify read: %d bytes, %v)", k.name, n, err)
				}
			})
		}
	}
}
