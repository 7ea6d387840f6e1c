package cryptocore

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/jacobsa/crypto/siv"

	"gocryptfs/internal/benchutil"
	"gocryptfs/internal/testutil"
)

func sivRand(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func mustSIV(t testing.TB, key []byte) *sivAEAD {
	t.Helper()
	a, err := NewAESSIV(key)
	if err != nil {
		t.Fatal(err)
	}
	return a.(*sivAEAD)
}

// TestSIVMatchesJacobsa compares with the RFC 5297 implementation the
// reference uses, for the vector [ad, nonce] and many lengths.
func TestSIVMatchesJacobsa(t *testing.T) {
	lengths := []int{0, 1, 15, 16, 17, 31, 32, 33, 127, 128, 129, 4095, 4096, 4097, 65536}
	adLengths := []int{0, 1, 8, 16, 24, 40}
	for _, n := range lengths {
		for _, adn := range adLengths {
			t.Run(fmt.Sprintf("len=%d/ad=%d", n, adn), func(t *testing.T) {
				key := sivRand(64)
				a := mustSIV(t, key)
				nonce, pt, ad := sivRand(16), sivRand(n), sivRand(adn)
				want, err := siv.Encrypt(nil, key, pt, [][]byte{ad, nonce})
				if err != nil {
					t.Fatal(err)
				}
				got := a.Seal(nil, nonce, pt, ad)
				if !bytes.Equal(got, want) {
					t.Fatalf("Seal differs from jacobsa:\n got %x\nwant %x", got, want)
				}
				dec, err := a.Open(nil, nonce, want, ad)
				if err != nil || !bytes.Equal(dec, pt) {
					t.Fatalf("Open: %v", err)
				}
				// A single flipped bit in ciphertext, AD or nonce is
				// rejected (each flip is undone before the next).
				for _, f := range []struct {
					what string
					buf  []byte
				}{{"ciphertext", want}, {"ad", ad}, {"nonce", nonce}} {
					if len(f.buf) == 0 {
						continue
					}
					i, bit := mrand.IntN(len(f.buf)), byte(1)<<mrand.IntN(8)
					f.buf[i] ^= bit
					out := make([]byte, 0, len(want))
					if _, err := a.Open(out, nonce, want, ad); !errors.Is(err, ErrSIVAuth) {
						t.Fatalf("flipped %s byte %d accepted", f.what, i)
					}
					if !bytes.Equal(out[:cap(out)], make([]byte, cap(out))) {
						t.Fatal("plaintext left in dst after failed Open")
					}
					f.buf[i] ^= bit
				}
			})
		}
	}
}

// TV-10 of docs/format.md: hello.txt of the -aessiv filesystem.
func TestSIVTV10(t *testing.T) {
	mk := testutil.MasterKey()
	key, err := ContentKey(mk, AESSIV, true)
	if err != nil {
		t.Fatal(err)
	}
	a := mustSIV(t, key)
	fileID := testutil.MustHex(t, "947625b5739c88c2f50591a452732e6d")
	nonce := testutil.MustHex(t, "ee6c6d05a1dce254dc222684ab9b8daa")
	ct := testutil.MustHex(t, "f18274dc4e75b5d50a3ce2ce7917e321774369d517dee5b049c7376e")
	ad := append(make([]byte, 8), fileID...)
	pt, err := a.Open(nil, nonce, ct, ad)
	if err != nil || string(pt) != "hello world\n" {
		t.Fatalf("got %q, %v", pt, err)
	}
	if got := a.Seal(nil, nonce, pt, ad); !bytes.Equal(got, ct) {
		t.Fatalf("Seal gives %x, want %x", got, ct)
	}
}

func TestSIVInPlace(t *testing.T) {
	a := mustSIV(t, sivRand(64))
	for _, n := range []int{0, 5, 16, 4096} {
		nonce, ad, pt := sivRand(16), sivRand(24), sivRand(n)
		want := a.Seal(nil, nonce, pt, ad)
		buf := make([]byte, n, n+16)
		copy(buf, pt)
		ct := a.Seal(buf[:0], nonce, buf, ad)
		if !bytes.Equal(ct, want) {
			t.Fatalf("n=%d: in-place Seal differs", n)
		}
		got, err := a.Open(ct[:0], nonce, ct, ad)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("n=%d: in-place Open: %v", n, err)
		}
		// Prefix in dst is kept.
		out := a.Seal([]byte("pre"), nonce, pt, ad)
		if string(out[:3]) != "pre" || !bytes.Equal(out[3:], want) {
			t.Fatalf("n=%d: Seal with prefix wrong", n)
		}
	}
	if _, err := a.Open(nil, sivRand(16), make([]byte, 15), nil); !errors.Is(err, ErrSIVAuth) {
		t.Fatal("short ciphertext accepted")
	}
}

func TestSIVNoAllocs(t *testing.T) {
	a := mustSIV(t, sivRand(64))
	nonce, ad, pt := sivRand(16), sivRand(24), sivRand(4096)
	buf := make([]byte, 0, 4096+16)
	ct := a.Seal(nil, nonce, pt, ad)
	out := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { a.Seal(buf, nonce, pt, ad) }); n != 0 {
		t.Errorf("Seal: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := a.Open(out, nonce, ct, ad); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Open: %v allocations", n)
	}
}

func TestSIVConcurrent(t *testing.T) {
	key := sivRand(64)
	a := mustSIV(t, key)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				nonce, ad, pt := sivRand(16), sivRand(24), sivRand(mrand.IntN(3000))
				want, _ := siv.Encrypt(nil, key, pt, [][]byte{ad, nonce})
				if got := a.Seal(nil, nonce, pt, ad); !bytes.Equal(got, want) {
					t.Error("concurrent Seal differs")
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSIVWipe(t *testing.T) {
	a := mustSIV(t, sivRand(64))
	a.Wipe()
	if a.k1 != [16]byte{} || a.k2 != [16]byte{} {
		t.Error("subkeys not cleared")
	}
	defer func() {
		if recover() == nil {
			t.Error("Seal after Wipe did not panic")
		}
	}()
	a.Seal(nil, make([]byte, 16), nil, nil)
}

func TestSIVBadKey(t *testing.T) {
	for _, n := range []int{0, 32, 63, 65} {
		if _, err := NewAESSIV(make([]byte, n)); err == nil {
			t.Errorf("key of %d bytes accepted", n)
		}
	}
}

// BenchmarkSIV compares this implementation with jacobsa/crypto/siv.
func BenchmarkSIV(b *testing.B) {
	key := sivRand(64)
	a := mustSIV(b, key)
	nonce, ad := sivRand(16), sivRand(24)
	for _, size := range []int{4096} {
		pt := sivRand(size)
		buf := make([]byte, 0, size+16)
		ct := a.Seal(nil, nonce, pt, ad)
		out := make([]byte, 0, size)
		cases := []struct {
			name string
			f    func()
		}{
			{"Seal/own", func() { a.Seal(buf, nonce, pt, ad) }},
			{"Seal/jacobsa", func() { siv.Encrypt(buf, key, pt, [][]byte{ad, nonce}) }},
			{"Open/own", func() { a.Open(out, nonce, ct, ad) }},
			{"Open/jacobsa", func() { siv.Decrypt(key, ct, [][]byte{ad, nonce}) }},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%d", c.name, size), func(b *testing.B) { benchutil.LoopCPU(b, size, c.f) })
		}
	}
}

// TestGCMCTR checks the GCM-as-CTR mapping directly: the keystream must be
// E(q), E(q+1), ... for counters with bits 31 and 63 clear, including the
// edge values of the low 32 bits.
func TestGCMCTR(t *testing.T) {
	a := mustSIV(t, sivRand(64))
	lows := []uint32{0, 1, 2, 0x7ffffff0, 0x7fffffff, 0x12345678}
	for _, low := range lows {
		var q [16]byte
		rand.Read(q[:])
		q[8] &= 0x7f
		binary.BigEndian.PutUint32(q[12:], low)
		var n [16]byte
		a.ctrNonce.nonceFor(&n, &q)
		const blocks = 20
		ks := a.ctrGCM.Seal(nil, n[:], make([]byte, blocks*16), nil)[:blocks*16]
		ctr := q
		for j := 0; j < blocks; j++ {
			var want [16]byte
			a.ctr.Encrypt(want[:], ctr[:])
			if !bytes.Equal(ks[j*16:(j+1)*16], want[:]) {
				t.Fatalf("low=%#x block %d: keystream differs", low, j)
			}
			binary.BigEndian.PutUint64(ctr[8:], binary.BigEndian.Uint64(ctr[8:])+1)
		}
	}
}

// TestSIVWithoutGCMCTR covers the block-by-block CTR fallback used when
// GCM's hash key is zero.
func TestSIVWithoutGCMCTR(t *testing.T) {
	key := sivRand(64)
	a := mustSIV(t, key)
	a.ctrGCM = nil
	for _, n := range []int{0, 15, 200, 4096} {
		nonce, ad, pt := sivRand(16), sivRand(24), sivRand(n)
		want, _ := siv.Encrypt(nil, key, pt, [][]byte{ad, nonce})
		if got := a.Seal(nil, nonce, pt, ad); !bytes.Equal(got, want) {
			t.Fatalf("n=%d: differs from jacobsa", n)
		}
	}
}
