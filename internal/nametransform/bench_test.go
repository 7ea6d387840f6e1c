package nametransform

import (
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// Name encryption runs on every lookup; these benchmarks and the allocation
// test below keep an eye on its cost.

func benchNT(b testing.TB) (*NameTransform, []byte) {
	return newNT(b, cryptocore.AESGCM, true, defaultOpts), testutil.MustHex(b, testutil.TV4RootIV)
}

func BenchmarkEncryptName(b *testing.B) {
	n, iv := benchNT(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.EncryptName("hello.txt", iv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptName(b *testing.B) {
	n, iv := benchNT(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.DecryptName("90mGAqBQtvpoJD1knzTcOQ", iv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncryptAndHashName255(b *testing.B) {
	n, iv := benchNT(b)
	name := rep("L", 255)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.EncryptAndHashName(name, iv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptName255(b *testing.B) {
	n, iv := benchNT(b)
	enc, _ := n.EncryptName(rep("L", 255), iv)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.DecryptName(enc, iv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptSymlinkTarget(b *testing.B) {
	n, _ := benchNT(b)
	s, _ := n.EncryptSymlinkTarget("../some/where/else")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.DecryptSymlinkTarget(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNameAllocs checks that EncryptName and DecryptName allocate nothing
// beyond the EME library's own allocations and the returned string.
func TestNameAllocs(t *testing.T) {
	n, iv := benchNT(t)
	p := pad16(nil, "hello.txt")
	eme := testing.AllocsPerRun(200, func() { n.cc.EME.Encrypt(iv, p) })
	cases := map[string]func(){
		"EncryptName": func() { n.EncryptName("hello.txt", iv) },
		"DecryptName": func() { n.DecryptName("90mGAqBQtvpoJD1knzTcOQ", iv) },
	}
	for name, fn := range cases {
		if got := testing.AllocsPerRun(200, fn); got > eme+1 {
			t.Errorf("%s: %v allocs/op, the EME library alone needs %v", name, got, eme)
		}
	}
	// The hashed long-name path adds only the hash string.
	long := rep("L", 255)
	emeLong := testing.AllocsPerRun(50, func() { n.cc.EME.Encrypt(iv, pad16(nil, long)) })
	if got := testing.AllocsPerRun(50, func() { n.EncryptAndHashName(long, iv) }); got > emeLong+2 {
		t.Errorf("EncryptAndHashName: %v allocs/op, the EME library alone needs %v", got, emeLong)
	}
}
