package contentio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// fill writes a file until the filesystem is full.
func fill(t *testing.T, path string) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := fh.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestENOSPC checks that a write failing for lack of space reports ENOSPC
// and leaves the blocks it did not target readable: with preallocation the
// file is not touched at all.
func TestENOSPC(t *testing.T) {
	for _, noPrealloc := range []bool{false, true} {
		t.Run(map[bool]string{false: "prealloc", true: "noprealloc"}[noPrealloc], func(t *testing.T) {
			dir := t.TempDir()
			testutil.MountTmpfs(t, dir, "size=256k")
			ce := newCE(t, cryptocore.AESGCM)
			path := filepath.Join(dir, "f")
			f := openPath(t, NewTable(), ce, path, Options{NoPrealloc: noPrealloc})
			defer f.Close()
			plain := pattern(50000, 3)
			if _, err := f.WriteAt(plain, 0); err != nil {
				t.Fatal(err)
			}
			fill(t, filepath.Join(dir, "filler"))
			before := readBacking(t, path)

			big := bytes.Repeat([]byte{7}, 200<<10)
			_, err := f.WriteAt(big, 60000)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("write on a full filesystem: %v, want ENOSPC", err)
			}
			var errno syscall.Errno
			if !errors.As(err, &errno) || errno != syscall.ENOSPC {
				t.Fatalf("errors.As errno = %v", errno)
			}
			if !noPrealloc {
				if !bytes.Equal(readBacking(t, path), before) {
					t.Fatal("a write refused by preallocation changed the file")
				}
				if err := f.Verify(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			// The old blocks, except the old last one (which the write had
			// to pad), still hold the old data.
			keep := 50000 / bs * bs
			got := make([]byte, keep)
			if _, err := f.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain[:keep]) {
				t.Fatal("blocks outside the failed write changed")
			}
		})
	}
}
