package contentio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil/coretest"
)

var allCiphers = []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305}

func newCE(tb testing.TB, c cryptocore.ContentCipher) *contentenc.ContentEnc {
	tb.Helper()
	return coretest.New(tb, coretest.Options{Cipher: c, Backend: cryptocore.BackendGo, HKDF: true}).CE
}

// openPath opens (creating if needed) path read-write and wraps it.
func openPath(tb testing.TB, tbl *Table, ce *contentenc.ContentEnc, path string, opts Options) *File {
	tb.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := Open(tbl, ce, fd, opts)
	if err != nil {
		unix.Close(fd)
		tb.Fatal(err)
	}
	return f
}

// newFile creates a fresh backing file in a temp dir and opens it; it is
// closed at cleanup.
func newFile(tb testing.TB, ce *contentenc.ContentEnc, opts Options) (*File, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "f")
	f := openPath(tb, NewTable(), ce, path, opts)
	tb.Cleanup(func() { f.Close() })
	return f, path
}

func cipherSize(tb testing.TB, path string) uint64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return uint64(fi.Size())
}

func readBacking(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// readAll reads the whole plaintext of f.
func readAll(tb testing.TB, f *File) []byte {
	tb.Helper()
	size, err := f.Size(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	buf := make([]byte, size+1)
	n, err := f.ReadAt(buf, 0)
	if uint64(n) != size || err == nil {
		tb.Fatalf("ReadAt whole file: n=%d err=%v, want %d and io.EOF", n, err, size)
	}
	return buf[:n]
}

func allZero(b []byte) bool {
	return len(bytes.Trim(b, "\x00")) == 0
}
