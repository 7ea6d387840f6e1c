package contentenc

import (
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

type benchCipher struct {
	name string
	ce   *ContentEnc
}

// benchCiphers returns every cipher with the Go backend, plus the OpenSSL
// variants when this build has them.
func benchCiphers(b *testing.B) []benchCipher {
	mk := testutil.MasterKey()
	var out []benchCipher
	for _, backend := range []cryptocore.Backend{cryptocore.BackendGo, cryptocore.BackendOpenSSL} {
		for _, c := range allCiphers {
			cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: c, Backend: backend, HKDF: true})
			if err != nil {
				continue // e.g. no OpenSSL in this build, or AES-SIV on OpenSSL
			}
			ce, err := New(cc, Options{})
			if err != nil {
				b.Fatal(err)
			}
			name := c.String()
			if backend == cryptocore.BackendOpenSSL {
				name += "-OpenSSL"
			}
			out = append(out, benchCipher{name, ce})
		}
	}
	return out
}

var benchSizes = []struct {
	name string
	n    int
}{{"4KiB", DefaultBS}, {"1MiB", 1 << 20}}

func BenchmarkEncryptBlocks(b *testing.B) {
	for _, bc := range benchCiphers(b) {
		for _, sz := range benchSizes {
			b.Run(bc.name+"/"+sz.name, func(b *testing.B) {
				ce := bc.ce
				h := RandomHeader(ce.cc.Nonces)
				plain := pattern(sz.n, 1)
				cbuf := ce.GetCBuf()
				defer ce.PutCBuf(cbuf)
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				for b.Loop() {
					ce.EncryptBlocks(*cbuf, plain, 0, h.ID[:])
				}
			})
		}
	}
}

func BenchmarkDecryptBlocks(b *testing.B) {
	for _, bc := range benchCiphers(b) {
		for _, sz := range benchSizes {
			b.Run(bc.name+"/"+sz.name, func(b *testing.B) {
				ce := bc.ce
				h := RandomHeader(ce.cc.Nonces)
				ct := ce.EncryptBlocks(nil, pattern(sz.n, 1), 0, h.ID[:])
				pbuf := ce.GetPBuf()
				defer ce.PutPBuf(pbuf)
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := ce.DecryptBlocks(*pbuf, ct, 0, h.ID[:]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkEncryptBlocksDerived is the reverse-mode read path (AES-SIV only
// in practice).
func BenchmarkEncryptBlocksDerived(b *testing.B) {
	for _, bc := range benchCiphers(b) {
		if bc.ce.Cipher() != cryptocore.AESSIV {
			continue
		}
		b.Run(bc.name+"/1MiB", func(b *testing.B) {
			ce := bc.ce
			plain := pattern(1<<20, 1)
			cbuf := ce.GetCBuf()
			defer ce.PutCBuf(cbuf)
			id, iv := pathIV("p", "FILEID"), pathIV("p", "BLOCK0IV")
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ce.EncryptBlocksDerived(*cbuf, plain, 0, id, iv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
