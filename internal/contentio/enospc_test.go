package contentio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
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

// fillLeaving fills the filesystem of dir and then frees about free bytes,
// so that the next big write fails with ENOSPC after writing part of it.
func fillLeaving(t *testing.T, dir string, free int64) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	fill(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, max(0, fi.Size()-free)); err != nil {
		t.Fatal(err)
	}
}

// TestENOSPCAppend checks that appends, which are not preallocated, leave
// the file as it was when the disk fills up in the middle of them: the
// written part is punched out and cut off again, the old content reads
// back, every block authenticates, and the file takes appends again once
// there is space. Single writers (reserved and exclusive) and several
// writers extending the file at once, some of which fail.
func TestENOSPCAppend(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	const old = 12 * bs // block-aligned, so that appends are fresh blocks
	setup := func(t *testing.T) (*File, string, string, []byte) {
		dir := t.TempDir()
		testutil.MountTmpfs(t, dir, "size=512k")
		path := filepath.Join(dir, "f")
		f := openPath(t, NewTable(), ce, path, Options{})
		t.Cleanup(func() { f.Close() })
		plain := pattern(old, 5)
		if _, err := f.WriteAt(plain, 0); err != nil {
			t.Fatal(err)
		}
		fillLeaving(t, dir, 40<<10)
		return f, dir, path, plain
	}
	check := func(t *testing.T, f *File, path string, plain []byte, wantCipher uint64) {
		t.Helper()
		if err := f.Verify(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, f)
		if !bytes.Equal(got[:len(plain)], plain) {
			t.Fatal("the old content changed")
		}
		if wantCipher != 0 && cipherSize(t, path) != wantCipher {
			t.Fatalf("ciphertext size %d after the failed append, want %d", cipherSize(t, path), wantCipher)
		}
	}
	big := bytes.Repeat([]byte{9}, 200<<10)
	for _, exclusive := range []bool{false, true} {
		t.Run(map[bool]string{false: "WriteAt", true: "Append"}[exclusive], func(t *testing.T) {
			f, dir, path, plain := setup(t)
			before := cipherSize(t, path)
			var err error
			if exclusive {
				_, _, err = f.Append(context.Background(), big)
			} else {
				_, err = f.WriteAt(big, old)
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append on a full filesystem: %v, want ENOSPC", err)
			}
			check(t, f, path, plain, before)
			if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(big[:bs], old); err != nil {
				t.Fatal(err)
			}
			check(t, f, path, plain, 0)
		})
	}
	t.Run("parallel", func(t *testing.T) {
		f, _, path, plain := setup(t)
		const writers, region = 4, 64 << 10
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				data := bytes.Repeat([]byte{byte(g + 1)}, region)
				for o := 0; o < region && errs[g] == nil; o += 16 << 10 {
					_, errs[g] = f.WriteAt(data[o:o+16<<10], int64(old+g*region+o))
				}
			})
		}
		wg.Wait()
		failed := 0
		for _, err := range errs {
			if err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				failed++
			}
		}
		if failed == 0 {
			t.Fatal("no writer ran out of space")
		}
		check(t, f, path, plain, 0)
		// What the writers that succeeded wrote reads back.
		got := readAll(t, f)
		for g, err := range errs {
			if err != nil {
				continue
			}
			want := bytes.Repeat([]byte{byte(g + 1)}, region)
			if end := old + (g+1)*region; len(got) < end || !bytes.Equal(got[old+g*region:end], want) {
				t.Fatalf("writer %d succeeded, its data does not read back", g)
			}
		}
	})
}
