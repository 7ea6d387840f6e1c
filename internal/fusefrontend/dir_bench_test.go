package fusefrontend

import (
	"fmt"
	"log/slog"
	"os"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil/coretest"
)

// BenchmarkReadDir lists a backing directory of 1000 files (one-block
// names) through readDir, the listing hot path of READDIR and
// READDIRPLUS, without a mount: getdents, classifying and decrypting
// every name, and the listing's slices. With -benchmem it shows what a
// listing allocates.
func BenchmarkReadDir(b *testing.B) {
	core := coretest.New(b, coretest.Options{MasterKey: make([]byte, cryptocore.KeyLen), HKDF: true, Names: nametransform.Options{Raw64: true}})
	rn, err := NewRootNode(Args{CipherDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)}, core.NT, core.CE)
	if err != nil {
		b.Fatal(err)
	}
	defer rn.Close()
	const n = 1000
	makeListDir(b, rn, n)
	b.ReportAllocs()
	for b.Loop() {
		listDirD(b, rn, n)
	}
}

// listDirD lists "d" (see makeListDir) through readDir and checks that it
// shows n entries. No tb.Helper: it is measured, and Helper allocates.
func listDirD(tb testing.TB, rn *RootNode, n int) {
	l, err := rn.readDir("d")
	if err != nil {
		tb.Fatal(err)
	}
	if len(l.ents) != n {
		tb.Fatalf("%d entries, want %d", len(l.ents), n)
	}
	l.Close()
}

// makeListDir creates, with directory IVs, the backing directory of the
// plaintext directory "d" in the root holding n empty files named
// "file-0000" etc.
func makeListDir(tb testing.TB, rn *RootNode, n int) {
	tb.Helper()
	cipher := rn.args.CipherDir
	iv, err := nametransform.WriteDirIVAt(rn.rootFd)
	if err != nil {
		tb.Fatal(err)
	}
	dName, _, err := rn.encryptName("d", iv)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Mkdir(cipher+"/"+dName, 0o755); err != nil {
		tb.Fatal(err)
	}
	fd, err := os.Open(cipher + "/" + dName)
	if err != nil {
		tb.Fatal(err)
	}
	dIV, err := nametransform.WriteDirIVAt(int(fd.Fd()))
	fd.Close()
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		c, _, err := rn.encryptName(fmt.Sprintf("file-%04d", i), dIV)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(cipher+"/"+dName+"/"+c, nil, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
