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
	cipher := rn.args.CipherDir
	iv, err := nametransform.WriteDirIVAt(rn.rootFd)
	if err != nil {
		b.Fatal(err)
	}
	dName, _, err := rn.encryptName("d", iv)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Mkdir(cipher+"/"+dName, 0o755); err != nil {
		b.Fatal(err)
	}
	fd, err := os.Open(cipher + "/" + dName)
	if err != nil {
		b.Fatal(err)
	}
	dIV, err := nametransform.WriteDirIVAt(int(fd.Fd()))
	fd.Close()
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	for i := range n {
		c, _, err := rn.encryptName(fmt.Sprintf("file-%04d", i), dIV)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(cipher+"/"+dName+"/"+c, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		l, err := rn.readDir("d")
		if err != nil {
			b.Fatal(err)
		}
		if len(l.ents) != n {
			b.Fatalf("%d entries, want %d", len(l.ents), n)
		}
		l.Close()
	}
}
