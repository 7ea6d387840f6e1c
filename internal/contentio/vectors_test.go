package contentio

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// TestTV7 reads ciphertext written by the reference (docs/format.md TV-7).
func TestTV7(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	tests := []struct {
		name, cipherHex, plain string
	}{
		{"one", `0002 95e7ef1ef9d7205ba8409fa6f9e4ba46 9d0df759629108b2575bb1eb01dd67ad
			74 b8c8a3a7c00e246b048bfee30aeda6f6`, "a"},
		{"hello.txt", `0002 420b04fae4bc38a8548393d366b9d635 e55fd73199ac809d2617ce9bb26a19c1
			38544c8e993d38c6691cda11 a7979226216685edf5d656c545c052f0`, "hello world\n"},
		{"dir1/file.txt", `0002 f3a156a3a4412305348f384f685e1fb1 92786d2202c39a1713bc25f0aed1ede6
			3acbb6 4f5d7b085ab1ddedca6eedc649f36932`, "abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, path := newFile(t, ce, Options{})
			if err := os.WriteFile(path, testutil.MustHex(t, tc.cipherHex), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := string(readAll(t, f)); got != tc.plain {
				t.Fatalf("plaintext %q, want %q", got, tc.plain)
			}
			if err := f.Verify(context.Background()); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			// Appending keeps the reference's header and block 0 readable.
			if _, _, err := f.Append(context.Background(), []byte("+more")); err != nil {
				t.Fatal(err)
			}
			if got := string(readAll(t, f)); got != tc.plain+"+more" {
				t.Fatalf("after append %q", got)
			}
			if got := readBacking(t, path)[:18]; hex.EncodeToString(got) != strings.Join(strings.Fields(tc.cipherHex), "")[:36] {
				t.Fatalf("header changed to %x", got)
			}
		})
	}
}

// TestTV8Holes reproduces the hole files of docs/format.md TV-8: sizes and
// which ciphertext blocks are all-zero holes.
func TestTV8Holes(t *testing.T) {
	type op func(f *File) error
	truncate := func(n uint64) op { return func(f *File) error { return f.Truncate(context.Background(), n) } }
	writeAt := func(off int64) op {
		return func(f *File) error { _, err := f.WriteAt([]byte{'x'}, off); return err }
	}
	tests := []struct {
		name      string
		op        op
		plainSize uint64
		gcmSize   uint64 // AES-GCM and AES-SIV (from the spec)
		holes     int    // leading all-zero blocks
		lastLen   uint64 // length of the real last ciphertext block (GCM), 0 if none
	}{
		{"hole1 truncate 8192", truncate(8192), 8192, 8274, 2, 0},
		{"hole2 truncate 10000", truncate(10000), 10000, 10114, 2, 1840},
		{"hole3 dd seek=20000", writeAt(20000), 20001, 20179, 4, 3649},
		{"hole4 write at 9000", writeAt(9000), 9001, 9115, 2, 841},
	}
	for _, c := range allCiphers {
		ce := newCE(t, c)
		cbs, o := uint64(ce.CipherBS()), uint64(ce.BlockOverhead())
		for _, tc := range tests {
			t.Run(c.String()+"/"+tc.name, func(t *testing.T) {
				f, path := newFile(t, ce, Options{})
				if err := tc.op(f); err != nil {
					t.Fatal(err)
				}
				want := tc.gcmSize
				if c == cryptocore.XChaCha20Poly1305 {
					want = ce.PlainSizeToCipherSize(tc.plainSize)
				}
				if got := cipherSize(t, path); got != want {
					t.Fatalf("ciphertext size %d, want %d", got, want)
				}
				if size, _ := f.Size(context.Background()); size != tc.plainSize {
					t.Fatalf("plaintext size %d, want %d", size, tc.plainSize)
				}
				raw := readBacking(t, path)
				if _, err := contentenc.ParseHeader(raw[:18]); err != nil {
					t.Fatalf("header: %v", err)
				}
				for i := 0; i < tc.holes; i++ {
					blk := raw[18+uint64(i)*cbs : 18+uint64(i+1)*cbs]
					if !allZero(blk) {
						t.Errorf("block %d is not a hole", i)
					}
				}
				rest := raw[18+uint64(tc.holes)*cbs:]
				if tc.lastLen != 0 && uint64(len(rest)) != tc.lastLen-32+o {
					t.Errorf("last block %d bytes, want %d", len(rest), tc.lastLen-32+o)
				}
				if tc.lastLen == 0 && len(rest) != 0 {
					t.Errorf("%d bytes after the holes, want none", len(rest))
				}
				got := readAll(t, f)
				for i, b := range got {
					wantB := byte(0)
					if i == 20000 && tc.plainSize == 20001 || i == 9000 && tc.plainSize == 9001 {
						wantB = 'x'
					}
					if b != wantB {
						t.Fatalf("byte %d = %#x, want %#x", i, b, wantB)
					}
				}
				if err := f.Verify(context.Background()); err != nil {
					t.Fatalf("Verify: %v", err)
				}
			})
		}
	}
}

// writeFile creates a file with plaintext p through a fresh File and
// returns the backing path.
func writeFile(t *testing.T, ce *contentenc.ContentEnc, p []byte) string {
	t.Helper()
	f, path := newFile(t, ce, Options{})
	if _, err := f.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	return path
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7+i/4096)
	}
	return b
}

// TestTV15Corruption covers the corruption cases of docs/format.md 4.8 / TV-15.
func TestTV15Corruption(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	cbs := int64(ce.CipherBS())
	type check struct {
		off, n  int64
		wantErr bool // EIO
		block   int64
	}
	tests := []struct {
		name      string
		plain     []byte
		mangle    func(t *testing.T, path string)
		size      uint64
		checks    []check
		logWant   string
		verifyBad bool
	}{
		{
			name:  "flipped byte in block 1 of 3",
			plain: pattern(10000, 1),
			mangle: func(t *testing.T, path string) {
				flipByte(t, path, 18+cbs+100)
			},
			size: 10000,
			checks: []check{
				{0, 4096, false, 0}, {8192, 1808, false, 0}, {4096, 1, true, 1},
				{4000, 200, true, 1}, {0, 10000, true, 1},
			},
			logWant:   "corrupt block #1: cipher: message authentication failed",
			verifyBad: true,
		},
		{
			name:      "flipped byte of one",
			plain:     []byte("a"),
			mangle:    func(t *testing.T, path string) { flipByte(t, path, 40) },
			size:      1,
			checks:    []check{{0, 1, true, 0}},
			logWant:   "corrupt block #0: cipher: message authentication failed",
			verifyBad: true,
		},
		{
			name:  "header version 3",
			plain: []byte("hello world\n"),
			mangle: func(t *testing.T, path string) {
				writeAtPath(t, path, []byte{0, 3}, 0)
			},
			size:      12,
			checks:    []check{{0, 12, true, -1}},
			logWant:   "ParseHeader: invalid version, want=2 have=3",
			verifyBad: true,
		},
		{
			name:   "f4095 cut to 10 bytes",
			plain:  pattern(4095, 2),
			mangle: func(t *testing.T, path string) { os.Truncate(path, 10) },
			size:   0,
			checks: []check{{0, 100, false, 0}},
		},
		{
			name:   "f4096 cut to 18 bytes",
			plain:  pattern(4096, 3),
			mangle: func(t *testing.T, path string) { os.Truncate(path, 18) },
			size:   0,
			checks: []check{{0, 100, false, 0}},
		},
		{
			name:      "f4097 cut to 18+4128+20",
			plain:     pattern(4097, 4),
			mangle:    func(t *testing.T, path string) { os.Truncate(path, 18+4128+20) },
			size:      4097,
			checks:    []check{{0, 4096, false, 0}, {4096, 1, true, 1}, {0, 5000, true, 1}},
			logWant:   "corrupt block #1",
			verifyBad: true,
		},
		{
			name:  "short all-zero last block",
			plain: pattern(5000, 5),
			mangle: func(t *testing.T, path string) {
				writeAtPath(t, path, make([]byte, 5082-18-4128), 18+4128)
			},
			size:      5000,
			checks:    []check{{0, 4096, false, 0}, {4096, 904, true, 1}},
			logWant:   "corrupt block #1: all-zero nonce",
			verifyBad: true,
		},
		{
			name:  "block 0 swapped with block 1",
			plain: pattern(8192, 6),
			mangle: func(t *testing.T, path string) {
				raw := readBacking(t, path)
				b0 := append([]byte(nil), raw[18:18+cbs]...)
				writeAtPath(t, path, raw[18+cbs:18+2*cbs], 18)
				writeAtPath(t, path, b0, 18+cbs)
			},
			size:      8192,
			checks:    []check{{0, 1, true, 0}, {4096, 1, true, 1}},
			logWant:   "corrupt block #0",
			verifyBad: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, ce, tc.plain)
			tc.mangle(t, path)
			var logs testutil.SyncBuffer
			f := openPath(t, NewTable(), ce, path, Options{Logger: logs.Logger(slog.LevelInfo)})
			defer f.Close()
			if size, err := f.Size(context.Background()); err != nil || size != tc.size {
				t.Fatalf("Size = %d, %v; want %d", size, err, tc.size)
			}
			for _, ck := range tc.checks {
				buf := make([]byte, ck.n)
				n, err := f.ReadAt(buf, ck.off)
				if !ck.wantErr {
					end := min(ck.off+ck.n, int64(tc.size))
					wantN := max(0, end-ck.off)
					if int64(n) != wantN || (err != nil && err != io.EOF) {
						t.Fatalf("ReadAt(%d, %d) = %d, %v; want %d bytes", ck.off, ck.n, n, err, wantN)
					}
					if string(buf[:n]) != string(tc.plain[ck.off:ck.off+int64(n)]) {
						t.Fatalf("ReadAt(%d, %d): wrong data", ck.off, ck.n)
					}
					continue
				}
				if !errors.Is(err, syscall.EIO) {
					t.Fatalf("ReadAt(%d, %d) = %d, %v; want EIO", ck.off, ck.n, n, err)
				}
				var errno syscall.Errno
				if !errors.As(err, &errno) || errno != syscall.EIO {
					t.Fatalf("errors.As errno = %v", errno)
				}
				var cerr *CorruptError
				if !errors.As(err, &cerr) || cerr.Header != (ck.block < 0) || (ck.block >= 0 && cerr.Block != uint64(ck.block)) {
					t.Fatalf("error %v: want block %d", err, ck.block)
				}
			}
			log := logs.String()
			if tc.logWant != "" && !strings.Contains(log, tc.logWant) {
				t.Errorf("log %q does not contain %q", log, tc.logWant)
			}
			if strings.Count(log, "doRead") > 1 {
				t.Errorf("corruption logged more than once:\n%s", log)
			}
			err := f.Verify(context.Background())
			if tc.verifyBad != (err != nil) {
				t.Fatalf("Verify = %v, want error: %v", err, tc.verifyBad)
			}
			if tc.verifyBad && !errors.Is(err, syscall.EIO) {
				t.Fatalf("Verify = %v, want EIO", err)
			}
		})
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	testutil.FlipByte(t, path, off, 0x40)
}

func writeAtPath(t *testing.T, path string, b []byte, off int64) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestWriteOverCorruption checks that writes needing a corrupt block fail
// with EIO and leave the other blocks alone, while writes replacing whole
// blocks repair the file.
func TestWriteOverCorruption(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	cbs := int64(ce.CipherBS())
	plain := pattern(3*4096, 9)
	path := writeFile(t, ce, plain)
	flipByte(t, path, 18+cbs+50)
	f := openPath(t, NewTable(), ce, path, Options{})
	defer f.Close()
	before := readBacking(t, path)
	if _, err := f.WriteAt([]byte("zz"), 4096+10); !errors.Is(err, syscall.EIO) {
		t.Fatalf("partial write into corrupt block: %v, want EIO", err)
	}
	if err := f.Truncate(context.Background(), 4096+100); !errors.Is(err, syscall.EIO) {
		t.Fatalf("shrink into corrupt block: %v, want EIO", err)
	}
	if string(readBacking(t, path)) != string(before) {
		t.Fatal("failed operations changed the ciphertext")
	}
	if _, err := f.WriteAt(make([]byte, 4096), 4096); err != nil {
		t.Fatalf("full-block overwrite: %v", err)
	}
	copy(plain[4096:8192], make([]byte, 4096))
	if got := readAll(t, f); string(got) != string(plain) {
		t.Fatal("content after repair differs")
	}
	if err := f.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderOnly checks docs/format.md 4.1: an 18-byte file is empty and the
// next write replaces the header.
func TestHeaderOnly(t *testing.T) {
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c)
			for _, hdr := range []struct {
				name string
				b    []byte
			}{
				{"valid", contentenc.RandomHeader(nil).Pack()},
				{"garbage", []byte("not a header at al")},
				{"zeros", make([]byte, 18)},
				{"short", []byte("abcdefghij")},
			} {
				t.Run(hdr.name, func(t *testing.T) {
					f, path := newFile(t, ce, Options{})
					if err := os.WriteFile(path, hdr.b, 0o600); err != nil {
						t.Fatal(err)
					}
					if size, err := f.Size(context.Background()); size != 0 || err != nil {
						t.Fatalf("Size = %d, %v", size, err)
					}
					if n, err := f.ReadAt(make([]byte, 10), 0); n != 0 || err != io.EOF {
						t.Fatalf("ReadAt = %d, %v", n, err)
					}
					if err := f.Verify(context.Background()); err != nil {
						t.Fatalf("Verify: %v", err)
					}
					if _, err := f.WriteAt([]byte("data"), 5); err != nil {
						t.Fatal(err)
					}
					raw := readBacking(t, path)
					if string(raw[:18]) == string(hdr.b) {
						t.Fatal("header not replaced")
					}
					if _, err := contentenc.ParseHeader(raw[:18]); err != nil {
						t.Fatal(err)
					}
					if got := string(readAll(t, f)); got != "\x00\x00\x00\x00\x00data" {
						t.Fatalf("content %q", got)
					}
				})
			}
		})
	}
}

// TestTruncateZeroNewID checks that truncating to 0 drops the header and
// the next write gets a new file ID, also through a second handle.
func TestTruncateZeroNewID(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM)
	tbl := NewTable()
	path := t.TempDir() + "/f"
	a := openPath(t, tbl, ce, path, Options{})
	defer a.Close()
	b := openPath(t, tbl, ce, path, Options{})
	defer b.Close()
	if tbl.Len() != 1 {
		t.Fatalf("table has %d entries, want 1", tbl.Len())
	}
	if _, err := a.WriteAt([]byte("first"), 0); err != nil {
		t.Fatal(err)
	}
	id1 := readBacking(t, path)[:18]
	if err := b.Truncate(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if cipherSize(t, path) != 0 {
		t.Fatal("truncate to 0 left bytes")
	}
	if _, err := a.WriteAt([]byte("second"), 0); err != nil {
		t.Fatal(err)
	}
	if string(readBacking(t, path)[:18]) == string(id1) {
		t.Fatal("file ID reused after truncate to 0")
	}
	if got := string(readAll(t, b)); got != "second" {
		t.Fatalf("content %q", got)
	}
}
