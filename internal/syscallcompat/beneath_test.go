package syscallcompat

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenDirBeneath: with openat2 and with the component-wise walk, a
// symlink anywhere on the path (also one to a directory inside), "..",
// an absolute path and a non-directory are refused; real directories
// open. (A symlink is reported as ELOOP or, as the last component, ENOTDIR.)
func TestOpenDirBeneath(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"a/b/c", "in"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(base, "a/file"), nil, 0o600)
	os.Symlink(outside, filepath.Join(base, "a/out"))
	os.Symlink("b", filepath.Join(base, "a/rel"))
	bfd, err := OpenDirPath(base)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(bfd)
	var want unix.Stat_t
	unix.Stat(filepath.Join(base, "a/b/c"), &want)
	for _, openat2 := range []bool{true, false} {
		for rel, wantErr := range map[string]error{
			"a/b/c": nil, "": nil, "a": nil,
			"a/out": syscall.ELOOP, "a/out/x": syscall.ELOOP, "a/rel/c": syscall.ELOOP, "a/rel": syscall.ELOOP,
			"a/../in": syscall.EINVAL, "..": syscall.EINVAL, outside: syscall.EINVAL, "a//b": syscall.EINVAL, "a/./b": syscall.EINVAL,
			"a/file": syscall.ENOTDIR, "a/none": syscall.ENOENT,
		} {
			fd, err := openDirBeneath(bfd, rel, openat2)
			if wantErr == syscall.ELOOP && errors.Is(err, syscall.ENOTDIR) {
				// O_NOFOLLOW|O_DIRECTORY on a symlink: either error.
				err = syscall.ELOOP
			}
			if !errors.Is(err, wantErr) && !(wantErr == nil && err == nil) {
				t.Errorf("openat2=%v %q: got %v, want %v", openat2, rel, err, wantErr)
			}
			if err == nil {
				var st unix.Stat_t
				Fstat(fd, &st)
				if rel == "a/b/c" && st.Ino != want.Ino {
					t.Errorf("openat2=%v %q: wrong directory", openat2, rel)
				}
				Close(fd)
			}
		}
	}
}

// TestDataExtents: the data of a sparse file is found, the holes are not.
func TestDataExtents(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteAt(make([]byte, 4096), 0)
	f.Write([]byte{1})
	f.WriteAt([]byte{1}, 1<<30)
	f.Truncate(2 << 30)
	ext, err := DataExtents(int(f.Fd()), 2<<30)
	if err != nil {
		t.Fatal(err)
	}
	var data int64
	for _, e := range ext {
		data += e.Len
		if e.Off < 0 || e.Off+e.Len > 2<<30 {
			t.Errorf("extent %+v out of range", e)
		}
	}
	if len(ext) < 2 || data > 1<<20 {
		t.Errorf("extents %+v", ext)
	}
	if ext[len(ext)-1].Off > 1<<30 || ext[len(ext)-1].Off+ext[len(ext)-1].Len <= 1<<30 {
		t.Errorf("the byte at 1 GiB is not in the last extent: %+v", ext)
	}
}
