package syscallcompat

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAsCaller creates entries as another identity: they belong to it,
// its supplementary groups grant access, permissions are checked against
// it, and the daemon's own identity is back afterwards.
func TestAsCaller(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := t.TempDir()
	// t.TempDir and its parent are 0700: let the other identity in.
	must(t, unix.Chmod(filepath.Dir(dir), 0o755))
	must(t, unix.Chmod(dir, 0o755))
	open := filepath.Join(dir, "open")
	grp := filepath.Join(dir, "grp")
	for _, d := range []string{open, grp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must(t, unix.Chmod(open, 0o777))
	must(t, unix.Chown(grp, 0, 4321))
	must(t, unix.Chmod(grp, 0o070))
	create := func(p string) func() error {
		return func() error {
			fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}
	}
	owner := func(p string) (uint32, uint32) {
		var st unix.Stat_t
		must(t, unix.Lstat(p, &st))
		return st.Uid, st.Gid
	}
	c := Cred{Uid: 1234, Gid: 5678}
	must(t, AsCaller(c, create(filepath.Join(open, "a"))))
	if u, g := owner(filepath.Join(open, "a")); u != 1234 || g != 5678 {
		t.Errorf("created as %d:%d, want 1234:5678", u, g)
	}
	if err := AsCaller(c, create(filepath.Join(grp, "b"))); !errors.Is(err, syscall.EACCES) {
		t.Errorf("create without group membership: %v, want EACCES", err)
	}
	c.Groups = []uint32{4321}
	must(t, AsCaller(c, create(filepath.Join(grp, "c"))))
	// fn's error is passed through.
	if err := AsCaller(c, func() error { return syscall.EROFS }); err != syscall.EROFS {
		t.Errorf("fn error: %v", err)
	}
	// Back to root on every thread: many creates from many goroutines.
	done := make(chan error)
	for i := range 8 {
		go func() {
			p := filepath.Join(dir, "root"+string(rune('0'+i)))
			if err := create(p)(); err != nil {
				done <- err
				return
			}
			if u, g := owner(p); u != 0 || g != 0 {
				done <- errors.New(p + ": not created as root")
				return
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
