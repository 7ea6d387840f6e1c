package nametransform

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// openDir opens a fresh temporary directory and returns its path and fd.
func openDir(t *testing.T) (string, int) {
	t.Helper()
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

func TestDirIVFiles(t *testing.T) {
	dir, fd := openDir(t)
	iv, err := WriteDirIVAt(fd)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(dir, DirIVFilename))
	if err != nil || st.Mode() != 0o444 || st.Size() != DirIVLen {
		t.Fatalf("diriv file: %v %v", st, err)
	}
	got, err := ReadDirIVAt(fd)
	if err != nil || !bytes.Equal(got, iv) {
		t.Fatalf("ReadDirIVAt = %x, %v; want %x", got, err, iv)
	}
	if _, err := WriteDirIVAt(fd); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("second WriteDirIVAt: %v", err)
	}
	if again, _ := ReadDirIVAt(fd); !bytes.Equal(again, iv) {
		t.Error("failed second write modified the IV")
	}
	// Two directories get different IVs.
	_, fd2 := openDir(t)
	iv2, err := WriteDirIVAt(fd2)
	if err != nil || bytes.Equal(iv, iv2) {
		t.Errorf("second directory: %x, %v", iv2, err)
	}
}

func TestReadDirIVRejects(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  error
	}{
		{"missing", func(t *testing.T, dir string) {}, syscall.ENOENT},
		{"empty", func(t *testing.T, dir string) { writeFile(t, dir, DirIVFilename, nil) }, ErrBadDirIV},
		{"15 bytes", func(t *testing.T, dir string) { writeFile(t, dir, DirIVFilename, make15()) }, ErrBadDirIV},
		{"17 bytes", func(t *testing.T, dir string) { writeFile(t, dir, DirIVFilename, bytes.Repeat([]byte{1}, 17)) }, ErrBadDirIV},
		{"all zero", func(t *testing.T, dir string) { writeFile(t, dir, DirIVFilename, make([]byte, 16)) }, ErrBadDirIV},
		{"directory", func(t *testing.T, dir string) { mustDo(t, os.Mkdir(filepath.Join(dir, DirIVFilename), 0o755)) }, ErrBadDirIV},
		{"fifo", func(t *testing.T, dir string) { mustDo(t, unix.Mkfifo(filepath.Join(dir, DirIVFilename), 0o644)) }, ErrBadDirIV},
		{"symlink to a valid IV", func(t *testing.T, dir string) {
			writeFile(t, dir, "real", bytes.Repeat([]byte{7}, 16))
			mustDo(t, os.Symlink("real", filepath.Join(dir, DirIVFilename)))
		}, ErrBadDirIV},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, fd := openDir(t)
			c.setup(t, dir)
			iv, err := ReadDirIVAt(fd)
			if !errors.Is(err, c.want) || iv != nil {
				t.Errorf("ReadDirIVAt = %x, %v; want %v", iv, err, c.want)
			}
			if errors.Is(c.want, ErrBadDirIV) && !errors.Is(err, syscall.EIO) {
				t.Errorf("%v does not map to EIO", err)
			}
		})
	}
	// WriteDirIVAt must not follow a planted (dangling) symlink either.
	dir, fd := openDir(t)
	mustDo(t, os.Symlink(filepath.Join(dir, "target"), filepath.Join(dir, DirIVFilename)))
	if _, err := WriteDirIVAt(fd); err == nil {
		t.Error("WriteDirIVAt followed a symlink")
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
		t.Error("symlink target was created")
	}
}

func TestLongNameFiles(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	iv := testutil.MustHex(t, testutil.TV4RootIV)
	dir, fd := openDir(t)
	plain := rep("N", 176)
	enc, _ := n.EncryptName(plain, iv)
	hashed, long := n.HashIfLong(enc)
	if !long {
		t.Fatal("N×176 must be long")
	}
	if err := n.WriteLongNameAt(fd, hashed, enc); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(dir, hashed+LongNameSuffix))
	if err != nil || st.Mode() != 0o444 || st.Size() != int64(len(enc)) {
		t.Fatalf(".name file: %v, %v", st, err)
	}
	if got, err := ReadLongNameAt(fd, hashed); err != nil || got != enc {
		t.Fatalf("ReadLongNameAt = %s, %v", got, err)
	}
	if got, err := n.DecryptNameAt(fd, hashed, iv); err != nil || got != plain {
		t.Fatalf("DecryptNameAt = %.10s, %v", got, err)
	}
	// Same content again is fine (rename/link keep an existing .name).
	if err := n.WriteLongNameAt(fd, hashed, enc); err != nil {
		t.Errorf("rewrite with same content: %v", err)
	}
	// Content not matching the hash is a caller bug.
	other, _ := n.EncryptName(rep("O", 176), iv)
	if err := n.WriteLongNameAt(fd, hashed, other); !errors.Is(err, ErrBadArgument) {
		t.Errorf("mismatching content: %v", err)
	}
	if err := n.WriteLongNameAt(fd, "RstaWk5xuBGCq94EGMhOoQ", "x"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("not a hashed name: %v", err)
	}
	if err := DeleteLongNameAt(fd, hashed); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLongNameAt(fd, hashed); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("after delete: %v", err)
	}
	if err := DeleteLongNameAt(fd, hashed); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := ReadLongNameAt(fd, "foo"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("ReadLongNameAt(foo): %v", err)
	}
	if err := DeleteLongNameAt(fd, "foo"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("DeleteLongNameAt(foo): %v", err)
	}
	// A different existing .name file is not overwritten.
	writeFile(t, dir, hashed+LongNameSuffix, []byte("different"))
	if err := n.WriteLongNameAt(fd, hashed, enc); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("existing different .name: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, hashed+LongNameSuffix)); string(b) != "different" {
		t.Error("existing .name file was modified")
	}
}

func TestReadLongNameRejects(t *testing.T) {
	const h = "gocryptfs.longname.abc"
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  error
	}{
		{"empty", func(t *testing.T, dir string) { writeFile(t, dir, h+LongNameSuffix, nil) }, ErrBadLongNameFile},
		{"345 bytes", func(t *testing.T, dir string) { writeFile(t, dir, h+LongNameSuffix, bytes.Repeat([]byte{'A'}, 345)) }, ErrBadLongNameFile},
		{"fifo", func(t *testing.T, dir string) { mustDo(t, unix.Mkfifo(filepath.Join(dir, h+LongNameSuffix), 0o644)) }, ErrBadLongNameFile},
		{"symlink", func(t *testing.T, dir string) {
			writeFile(t, dir, "real", []byte("AAAA"))
			mustDo(t, os.Symlink("real", filepath.Join(dir, h+LongNameSuffix)))
		}, ErrBadLongNameFile},
		{"missing", func(t *testing.T, dir string) {}, syscall.ENOENT},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, fd := openDir(t)
			c.setup(t, dir)
			if got, err := ReadLongNameAt(fd, h); !errors.Is(err, c.want) {
				t.Errorf("ReadLongNameAt = %q, %v; want %v", got, err, c.want)
			}
		})
	}
	// Exactly 344 bytes is accepted.
	dir, fd := openDir(t)
	writeFile(t, dir, h+LongNameSuffix, bytes.Repeat([]byte{'A'}, 344))
	if got, err := ReadLongNameAt(fd, h); err != nil || len(got) != 344 {
		t.Errorf("344 bytes: %d, %v", len(got), err)
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	mustDo(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func make15() []byte { return bytes.Repeat([]byte{9}, 15) }
