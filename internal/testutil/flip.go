package testutil

import (
	"os"
	"testing"
)

// FlipByte XORs the byte at off in the file at path with mask, to plant
// damage in ciphertext.
func FlipByte(t testing.TB, path string, off int64, mask byte) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	b := []byte{0}
	if _, err := fh.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= mask
	if _, err := fh.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
