package contentio

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestOpenAfterOutsideRewrite: another writer (a second mount, with its own
// Table) rewrote the file from scratch, with a new file ID, while a File of
// it was still open here, as happens when the kernel's RELEASE of a closed
// handle arrives after the next OPEN. A File opened afterwards reads the
// new contents: the open does not trust the file ID cached by the entry
// it shares with the old File (it used to, and the read failed as
// corrupt).
func TestOpenAfterOutsideRewrite(t *testing.T) {
	ctx := context.Background()
	ce := newCE(t, allCiphers[0])
	path := filepath.Join(t.TempDir(), "f")
	tbl := NewTable()
	old := openPath(t, tbl, ce, path, Options{})
	defer old.Close()
	if _, err := old.WriteAt(bytes.Repeat([]byte{1}, 20000), 0); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, old); !bytes.Equal(got, bytes.Repeat([]byte{1}, 20000)) {
		t.Fatal("first contents do not read back")
	}

	other := openPath(t, NewTable(), ce, path, Options{})
	if err := other.Truncate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte{2}, 20000)
	if _, err := other.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	other.Close()

	reopened := openPath(t, tbl, ce, path, Options{})
	defer reopened.Close()
	if got := readAll(t, reopened); !bytes.Equal(got, want) {
		t.Fatal("the reopened file does not read the new contents")
	}
}
