package stupidgcm

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// skipNoOpenSSL skips OpenSSL tests in builds without the backend.
func skipNoOpenSSL(t testing.TB) {
	t.Helper()
	if !Available {
		t.Skip("OpenSSL backend not compiled in (built with -tags without_openssl or CGO_ENABLED=0)")
	}
}

func goGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithNonceSize(b, 16)
}

// pair is one cipher with its OpenSSL and Go implementations.
type pair struct {
	name  string
	ossl  func([]byte) (cipher.AEAD, error)
	goimp func([]byte) (cipher.AEAD, error)
}

var pairs = []pair{
	{"AES-256-GCM", NewAESGCM, goGCM},
	{"ChaCha20-Poly1305", NewChaCha20Poly1305, chacha20poly1305.New},
	{"XChaCha20-Poly1305", NewXChaCha20Poly1305, chacha20poly1305.NewX},
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func mustNew(t testing.TB, f func([]byte) (cipher.AEAD, error), key []byte) cipher.AEAD {
	t.Helper()
	a, err := f(key)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestConstructorsWithoutOpenSSL(t *testing.T) {
	if Available {
		t.Skip("only meaningful in a build without OpenSSL")
	}
	for _, p := range pairs {
		if a, err := p.ossl(make([]byte, 32)); a != nil || !errors.Is(err, ErrNotCompiled) {
			t.Errorf("%s: got %v, %v; want nil, ErrNotCompiled", p.name, a, err)
		}
	}
}

func TestBadKeyLength(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		for _, n := range []int{0, 16, 31, 33, 64} {
			if _, err := p.ossl(make([]byte, n)); err == nil {
				t.Errorf("%s: key of %d bytes accepted", p.name, n)
			}
		}
	}
}

// TestInterop checks byte-for-byte equality with Go's implementations and
// that each side opens the other's output.
func TestInterop(t *testing.T) {
	skipNoOpenSSL(t)
	lengths := []int{0, 1, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097, 65536, 1<<20 + 3}
	adLengths := []int{0, 1, 24, 100}
	for _, p := range pairs {
		for _, n := range lengths {
			for _, adn := range adLengths {
				t.Run(fmt.Sprintf("%s/len=%d/ad=%d", p.name, n, adn), func(t *testing.T) {
					key := randBytes(32)
					o, g := mustNew(t, p.ossl, key), mustNew(t, p.goimp, key)
					if o.NonceSize() != g.NonceSize() || o.Overhead() != g.Overhead() {
						t.Fatalf("sizes differ: %d/%d vs %d/%d", o.NonceSize(), o.Overhead(), g.NonceSize(), g.Overhead())
					}
					nonce, pt, ad := randBytes(o.NonceSize()), randBytes(n), randBytes(adn)
					ct1 := o.Seal(nil, nonce, pt, ad)
					ct2 := g.Seal(nil, nonce, pt, ad)
					if !bytes.Equal(ct1, ct2) {
						t.Fatalf("ciphertexts differ")
					}
					for _, c := range []struct {
						name string
						a    cipher.AEAD
					}{{"OpenSSL", o}, {"Go", g}} {
						got, err := c.a.Open(nil, nonce, ct1, ad)
						if err != nil || !bytes.Equal(got, pt) {
							t.Fatalf("%s Open: %v", c.name, err)
						}
						checkTamper(t, c.name, c.a, nonce, ct1, ad)
					}
				})
			}
		}
	}
}

// checkTamper flips single bits in ciphertext, tag, AAD and nonce and
// expects every variant to be rejected.
func checkTamper(t *testing.T, name string, a cipher.AEAD, nonce, ct, ad []byte) {
	t.Helper()
	type variant struct {
		what          string
		nonce, ct, ad []byte
		pos           int
	}
	var vs []variant
	flips := func(what string, buf []byte, mk func([]byte) variant) {
		if len(buf) == 0 {
			return
		}
		for _, i := range []int{0, len(buf) / 2, len(buf) - 1, mrand.IntN(len(buf))} {
			c := bytes.Clone(buf)
			c[i] ^= 1 << mrand.IntN(8)
			v := mk(c)
			v.what, v.pos = what, i
			vs = append(vs, v)
		}
	}
	n := len(ct) - a.Overhead()
	flips("ciphertext", ct[:n], func(c []byte) variant { return variant{nonce: nonce, ct: append(c, ct[n:]...), ad: ad} })
	flips("tag", ct[n:], func(c []byte) variant { return variant{nonce: nonce, ct: append(bytes.Clone(ct[:n]), c...), ad: ad} })
	flips("AAD", ad, func(c []byte) variant { return variant{nonce: nonce, ct: ct, ad: c} })
	flips("nonce", nonce, func(c []byte) variant { return variant{nonce: c, ct: ct, ad: ad} })
	vs = append(vs, variant{what: "truncated", nonce: nonce, ct: ct[:len(ct)-1], ad: ad},
		variant{what: "tag only cut", nonce: nonce, ct: ct[:a.Overhead()-1], ad: ad})
	for _, v := range vs {
		dst := make([]byte, 0, len(v.ct))
		out, err := a.Open(dst, v.nonce, v.ct, v.ad)
		if err == nil || out != nil {
			t.Fatalf("%s: flipped %s byte %d accepted", name, v.what, v.pos)
		}
		if !bytes.Equal(dst[:cap(dst)], make([]byte, cap(dst))) {
			t.Fatalf("%s: plaintext left in dst after failed Open (%s)", name, v.what)
		}
	}
}

func TestInPlace(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			key := randBytes(32)
			o, g := mustNew(t, p.ossl, key), mustNew(t, p.goimp, key)
			nonce, ad := randBytes(o.NonceSize()), randBytes(24)
			pt := randBytes(4096)
			want := g.Seal(nil, nonce, pt, ad)
			buf := make([]byte, 4096, 4096+16)
			copy(buf, pt)
			ct := o.Seal(buf[:0], nonce, buf, ad)
			if &ct[0] != &buf[0] || !bytes.Equal(ct, want) {
				t.Fatal("in-place Seal wrong")
			}
			got, err := o.Open(ct[:0], nonce, ct, ad)
			if err != nil || &got[0] != &buf[0] || !bytes.Equal(got, pt) {
				t.Fatalf("in-place Open wrong: %v", err)
			}
			// Appending to a prefix keeps the prefix.
			pre := []byte("prefix")
			out := o.Seal(bytes.Clone(pre), nonce, pt, ad)
			if !bytes.Equal(out[:len(pre)], pre) || !bytes.Equal(out[len(pre):], want) {
				t.Fatal("Seal with prefix wrong")
			}
			// Failed in-place Open wipes the buffer.
			ct2 := g.Seal(nil, nonce, pt, ad)
			ct2[5] ^= 1
			if _, err := o.Open(ct2[:0], nonce, ct2, ad); !errors.Is(err, ErrAuth) {
				t.Fatalf("tampered in-place Open: %v", err)
			}
			if !bytes.Equal(ct2[:4096], make([]byte, 4096)) {
				t.Fatal("plaintext left after failed in-place Open")
			}
		})
	}
}

func TestPanics(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		a := mustNew(t, p.ossl, randBytes(32))
		ns := a.NonceSize()
		buf := make([]byte, 100)
		cases := map[string]func(){
			"Seal short nonce": func() { a.Seal(nil, make([]byte, ns-1), nil, nil) },
			"Seal long nonce":  func() { a.Seal(nil, make([]byte, ns+1), nil, nil) },
			"Open short nonce": func() { a.Open(nil, make([]byte, ns-1), make([]byte, 16), nil) },
			"Seal overlap":     func() { a.Seal(buf[1:1], make([]byte, ns), buf[:50], nil) },
		}
		for name, f := range cases {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: %s did not panic", p.name, name)
					}
				}()
				f()
			}()
		}
	}
}

func TestHChaCha20(t *testing.T) {
	skipNoOpenSSL(t)
	for i := 0; i < 50; i++ {
		key, nonce := randBytes(32), randBytes(16)
		want, err := chacha20.HChaCha20(key, nonce)
		if err != nil {
			t.Fatal(err)
		}
		if got := hchacha20(key, nonce); !bytes.Equal(got, want) {
			t.Fatalf("HChaCha20 mismatch: %x vs %x", got, want)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			a := mustNew(t, p.ossl, randBytes(32))
			nonce, ad, pt := randBytes(a.NonceSize()), randBytes(24), randBytes(4096)
			buf := make([]byte, 0, 4096+16)
			ct := a.Seal(nil, nonce, pt, ad)
			out := make([]byte, 0, 4096)
			ip := make([]byte, 4096, 4096+16)
			cases := []struct {
				name string
				f    func()
			}{
				{"Seal", func() { a.Seal(buf, nonce, pt, ad) }},
				{"Open", func() {
					if _, err := a.Open(out, nonce, ct, ad); err != nil {
						t.Fatal(err)
					}
				}},
				{"Seal in place", func() { a.Seal(ip[:0], nonce, ip, ad) }},
			}
			for _, c := range cases {
				if n := testing.AllocsPerRun(200, c.f); n != 0 {
					t.Errorf("%s: %v allocations per call", c.name, n)
				}
			}
			b := a.(batchAEAD)
			nonces := randBytes(16 * a.NonceSize())
			big := randBytes(16 * 4096)
			sealed := make([]byte, 0, 16*(4096+a.NonceSize()+16))
			opened := make([]byte, 0, len(big))
			fid := randBytes(16)
			sealed = b.SealBatch(sealed, nonces, big, 4096, 7, fid)
			if n := testing.AllocsPerRun(50, func() { b.SealBatch(sealed[:0], nonces, big, 4096, 7, fid) }); n != 0 {
				t.Errorf("SealBatch: %v allocations per call", n)
			}
			if n := testing.AllocsPerRun(50, func() {
				if _, err := b.OpenBatch(opened, sealed, 4096, 7, fid); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("OpenBatch: %v allocations per call", n)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			key := randBytes(32)
			o, g := mustNew(t, p.ossl, key), mustNew(t, p.goimp, key)
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						nonce, ad, pt := randBytes(o.NonceSize()), randBytes(24), randBytes(mrand.IntN(5000))
						ct := o.Seal(nil, nonce, pt, ad)
						if !bytes.Equal(ct, g.Seal(nil, nonce, pt, ad)) {
							errs <- fmt.Errorf("concurrent Seal differs")
							return
						}
						got, err := o.Open(nil, nonce, ct, ad)
						if err != nil || !bytes.Equal(got, pt) {
							errs <- fmt.Errorf("concurrent Open: %v", err)
							return
						}
						if i%10 == 0 {
							ct[0] ^= 1
							if _, err := o.Open(nil, nonce, ct, ad); err == nil {
								errs <- fmt.Errorf("concurrent Open accepted tampering")
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

func TestWipe(t *testing.T) {
	skipNoOpenSSL(t)
	for _, p := range pairs {
		a := mustNew(t, p.ossl, bytes.Repeat([]byte{0xaa}, 32))
		nonce := make([]byte, a.NonceSize())
		a.Seal(nil, nonce, []byte("x"), nil)
		w, ok := a.(interface{ Wipe() })
		if !ok {
			t.Fatalf("%s: no Wipe method", p.name)
		}
		w.Wipe()
		w.Wipe() // idempotent
		if !keyIsZero(a) {
			t.Errorf("%s: key not cleared", p.name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Seal after Wipe did not panic", p.name)
				}
			}()
			a.Seal(nil, nonce, []byte("x"), nil)
		}()
	}
}
