package contentenc

import (
	"bytes"
	"crypto/rand"
	"errors"
	mrand "math/rand/v2"
	"runtime"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

func TestNewRejects(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil CryptoCore accepted")
	}
	if _, err := New(&cryptocore.CryptoCore{}, Options{}); err == nil {
		t.Error("CryptoCore without AEAD accepted")
	}
}

// Every length from 0 to 3 blocks + 1, at a random starting block, seals
// and opens back, as a whole and block by block.
func TestRoundTripAllLengths(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	src := make([]byte, 3*DefaultBS+1)
	rand.Read(src)
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			id := RandomHeader(ce.cc.Nonces).ID
			prefix := []byte("keep")
			for n := 0; n <= len(src); n++ {
				if testing.Short() && c == cryptocore.AESSIV && n%17 != 0 {
					continue
				}
				plain := src[:n]
				first := rng.Uint64()
				ct := ce.EncryptBlocks(bytes.Clone(prefix), plain, first, id[:])
				if !bytes.HasPrefix(ct, prefix) || len(ct) != len(prefix)+ce.CipherLen(n) {
					t.Fatalf("n=%d: ciphertext %d bytes, want %d after prefix", n, len(ct), ce.CipherLen(n))
				}
				ct = ct[len(prefix):]
				pt, err := ce.DecryptBlocks(bytes.Clone(prefix), ct, first, id[:])
				if err != nil || !bytes.Equal(pt[len(prefix):], plain) || !bytes.HasPrefix(pt, prefix) {
					t.Fatalf("n=%d: round trip failed: %v", n, err)
				}
				// Block by block, with the single-block API.
				var one []byte
				for i := 0; i*ce.CipherBS() < len(ct); i++ {
					blk := ct[i*ce.CipherBS() : min((i+1)*ce.CipherBS(), len(ct))]
					one, err = ce.DecryptBlock(one, blk, first+uint64(i), id[:])
					if err != nil {
						t.Fatalf("n=%d block %d: %v", n, i, err)
					}
				}
				if !bytes.Equal(one, plain) {
					t.Fatalf("n=%d: DecryptBlock per block differs", n)
				}
			}
		})
	}
}

// A small in-memory file built only from this package's API, following
// docs/format.md 4.7: random writes at random offsets must read back like a plain
// byte slice, and the ciphertext size must always map to the plaintext
// size. This checks that the API is enough for package contentio.
type memFile struct {
	t     *testing.T
	ce    *ContentEnc
	ct    []byte // the ciphertext file
	id    []byte
	model []byte // what the plaintext should be
}

func (f *memFile) size() uint64 {
	p, prob := f.ce.CipherSizeToPlainSizeCheck(uint64(len(f.ct)))
	if prob != SizeOK {
		f.t.Fatalf("ciphertext size %d: %v", len(f.ct), prob)
	}
	return p
}

// readBlock returns the plaintext of block b (nil past EOF).
func (f *memFile) readBlock(b uint64) []byte {
	off := f.ce.BlockNoToCipherOff(b)
	if off >= uint64(len(f.ct)) {
		return nil
	}
	end := min(off+uint64(f.ce.CipherBS()), uint64(len(f.ct)))
	p, err := f.ce.DecryptBlock(nil, f.ct[off:end], b, f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *memFile) writeBlock(b uint64, plain []byte) {
	off := f.ce.BlockNoToCipherOff(b)
	blk := f.ce.EncryptBlock(nil, plain, b, f.id)
	if need := off + uint64(len(blk)); need > uint64(len(f.ct)) {
		// Growing the file leaves holes (zeros) in between.
		f.ct = append(f.ct, make([]byte, need-uint64(len(f.ct)))...)
	}
	copy(f.ct[off:], blk)
}

func (f *memFile) write(off uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	if len(f.ct) == 0 {
		h := RandomHeader(f.ce.cc.Nonces)
		f.ct = h.Pack()
		f.id = h.ID[:]
	}
	old := f.size()
	if old%DefaultBS != 0 && PlainOffToBlockNo(off) > PlainOffToBlockNo(old) {
		// Pad the old last block before writing past it.
		lb := PlainOffToBlockNo(old)
		p := f.readBlock(lb)
		f.writeBlock(lb, MergeBlocks(p, nil, DefaultBS))
	}
	var buf [8]BlockPart
	for _, part := range AppendPlainRange(buf[:0], off, uint64(len(data))) {
		src := data[part.PlainOff()+uint64(part.Skip)-off:][:part.Length]
		if part.IsPartial() {
			f.writeBlock(part.BlockNo, MergeBlocks(f.readBlock(part.BlockNo), src, part.Skip))
		} else {
			f.writeBlock(part.BlockNo, src)
		}
	}
	if end := off + uint64(len(data)); end > uint64(len(f.model)) {
		f.model = append(f.model, make([]byte, end-uint64(len(f.model)))...)
	}
	copy(f.model[off:], data)
}

func (f *memFile) check() {
	if f.size() != uint64(len(f.model)) {
		f.t.Fatalf("size %d, model %d", f.size(), len(f.model))
	}
	if len(f.ct) == 0 {
		return
	}
	// Read a random range the way a reader would: whole blocks from
	// cipherRange, then cut.
	off := mrand.Uint64N(uint64(len(f.model)) + 1)
	n := mrand.Uint64N(uint64(len(f.model)) + 2)
	cOff, cLen := cipherRange(f.ce, off, n)
	var got []byte
	if cOff < uint64(len(f.ct)) {
		body := f.ct[cOff:min(cOff+cLen, uint64(len(f.ct)))]
		first, _ := BlockRange(off, n)
		p, err := f.ce.DecryptBlocks(nil, body, first, f.id)
		if err != nil {
			f.t.Fatal(err)
		}
		skip := off - BlockNoToPlainOff(first)
		if skip < uint64(len(p)) {
			got = p[skip:min(uint64(len(p)), skip+n)]
		}
	}
	want := f.model[min(off, uint64(len(f.model))):min(off+n, uint64(len(f.model)))]
	if !bytes.Equal(got, want) {
		f.t.Fatalf("read(%d, %d): %d bytes differ from model (%d)", off, n, len(got), len(want))
	}
	all, err := f.ce.DecryptBlocks(nil, f.ct[HeaderLen:], 0, f.id)
	if err != nil || !bytes.Equal(all, f.model) {
		f.t.Fatalf("whole file differs: %v", err)
	}
}

func TestRandomWritesModel(t *testing.T) {
	src := make([]byte, 3*DefaultBS+1)
	rand.Read(src)
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			// Every 5th length (with random offsets) keeps the test fast;
			// the round-trip test above covers every length.
			step := 5
			if testing.Short() {
				step = 31
			}
			for n := 0; n <= len(src); n += step {
				f := &memFile{t: t, ce: ce}
				// Random existing content, then the write under test.
				f.write(0, src[:mrand.IntN(2*DefaultBS+2)])
				f.check()
				f.write(mrand.Uint64N(3*DefaultBS+1), src[:n])
				f.check()
			}
			// docs/format.md 4.7: one byte at offset 9000 of an empty file.
			f := &memFile{t: t, ce: ce}
			f.write(9000, []byte{'x'})
			f.check()
			if uint64(len(f.ct)) != ce.PlainSizeToCipherSize(9001) {
				t.Errorf("ciphertext %d bytes", len(f.ct))
			}
			for b := range 2 {
				off := ce.BlockNoToCipherOff(uint64(b))
				if !allZero(f.ct[off : off+uint64(ce.CipherBS())]) {
					t.Errorf("block %d is not a hole", b)
				}
			}
		})
	}
}

// Changing any single byte of the ciphertext, any byte of the header (whose
// file ID is in the AAD), the block order, the block number or the file ID
// is detected: an error wrapping ErrCorruptBlock for the right block, and
// only the plaintext of the blocks before it.
func TestTamperingDetected(t *testing.T) {
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			cbs := ce.CipherBS()
			plain := pattern(2*DefaultBS+100, 9)
			h := RandomHeader(ce.cc.Nonces)
			file := ce.EncryptBlocks(h.Pack(), plain, 0, h.ID[:])
			body := file[HeaderLen:]

			// block is the bad block's index in body, first the number of
			// body's first block.
			expectCorruptAt := func(what string, pt []byte, err error, block, first uint64) {
				t.Helper()
				var cbe *CorruptBlockError
				if !errors.Is(err, ErrCorruptBlock) || !errors.As(err, &cbe) {
					t.Fatalf("%s: not detected (err=%v)", what, err)
				}
				if cbe.BlockNo != first+block {
					t.Fatalf("%s: reported block #%d, want #%d", what, cbe.BlockNo, first+block)
				}
				if !bytes.Equal(pt, plain[:block*DefaultBS]) {
					t.Fatalf("%s: returned %d bytes of plaintext, want the %d before the bad block", what, len(pt), block*DefaultBS)
				}
			}
			expectCorrupt := func(what string, pt []byte, err error, block uint64) {
				t.Helper()
				expectCorruptAt(what, pt, err, block, 0)
			}

			step := 1
			if testing.Short() || c == cryptocore.AESSIV {
				step = 3
			}
			tampered := bytes.Clone(body)
			for i := 0; i < len(body); i += step {
				x := byte(1 << (i % 8))
				tampered[i] ^= x
				pt, err := ce.DecryptBlocks(nil, tampered, 0, h.ID[:])
				expectCorrupt("byte", pt, err, uint64(i/cbs))
				tampered[i] ^= x
			}
			for i := range HeaderLen {
				hdr := bytes.Clone(file[:HeaderLen])
				hdr[i] ^= 0x80
				h2, err := ParseHeader(hdr)
				if err != nil {
					if i >= 2 {
						t.Fatalf("header byte %d: %v", i, err)
					}
					continue
				}
				pt, err := ce.DecryptBlocks(nil, body, 0, h2.ID[:])
				expectCorrupt("header", pt, err, 0)
			}
			swapped := bytes.Clone(body)
			copy(swapped[:cbs], body[cbs:2*cbs])
			copy(swapped[cbs:2*cbs], body[:cbs])
			pt, err := ce.DecryptBlocks(nil, swapped, 0, h.ID[:])
			expectCorrupt("swap", pt, err, 0)

			pt, err = ce.DecryptBlocks(nil, body, 1, h.ID[:])
			expectCorruptAt("block number", pt, err, 0, 1)
			// Block 1 of this file is not block 1 of any other file.
			other := RandomHeader(nil)
			_, err = ce.DecryptBlock(nil, body[cbs:2*cbs], 1, other.ID[:])
			if !errors.Is(err, ErrCorruptBlock) {
				t.Fatalf("file ID: not detected (%v)", err)
			}
			_, err = ce.DecryptBlock(nil, body[:cbs], 0, h.ID[:15])
			if !errors.Is(err, ErrCorruptBlock) {
				t.Fatalf("short file ID: not detected (%v)", err)
			}
			// Known limit (docs/format.md 4.8): a cut at a block boundary is
			// not detected.
			if pt, err := ce.DecryptBlocks(nil, body[:cbs], 0, h.ID[:]); err != nil || !bytes.Equal(pt, plain[:DefaultBS]) {
				t.Fatalf("cut at block boundary: %v", err)
			}
			// An over-long single block is refused.
			if _, err := ce.DecryptBlock(nil, body[:cbs+1], 0, h.ID[:]); !errors.Is(err, ErrCorruptBlock) {
				t.Fatalf("over-long block: %v", err)
			}
		})
	}
}

// forceParallel makes the parallel paths run even on a one-core machine.
func forceParallel(t *testing.T) {
	old := runtime.GOMAXPROCS(4)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// The parallel paths produce exactly what one block at a time produces, and
// report the lowest bad block.
func TestParallelBlocks(t *testing.T) {
	forceParallel(t)
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			cbs := ce.CipherBS()
			id := RandomHeader(nil).ID
			iv := pathIV("some/path", "BLOCK0IV")
			if c == cryptocore.XChaCha20Poly1305 {
				iv = append(iv, pathIV("x", "y")[:8]...)
			}
			const nblocks = 300
			plain := pattern(nblocks*DefaultBS-123, 1)
			first := uint64(1<<64 - 150) // nonce and block number wrap around
			got, err := ce.EncryptBlocksDerived([]byte("pre"), plain, first, id[:], iv)
			if err != nil {
				t.Fatal(err)
			}
			want := []byte("pre")
			for i := 0; i < nblocks; i++ {
				p := plain[i*DefaultBS : min((i+1)*DefaultBS, len(plain))]
				nonce := DeriveBlockNonce(nil, iv, first+uint64(i))
				want, err = ce.EncryptBlockNonce(want, p, first+uint64(i), id[:], nonce)
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatal("parallel derived encryption differs from block-by-block")
			}
			ct := got[3:]
			pt, err := ce.DecryptBlocks(nil, ct, first, id[:])
			if err != nil || !bytes.Equal(pt, plain) {
				t.Fatalf("parallel decryption: %v", err)
			}
			random := ce.EncryptBlocks(nil, plain, first, id[:])
			if pt, err := ce.DecryptBlocks(nil, random, first, id[:]); err != nil || !bytes.Equal(pt, plain) {
				t.Fatalf("parallel random-nonce round trip: %v", err)
			}
			for _, bad := range [][]int{{0}, {5}, {150}, {299}, {200, 20}, {299, 298, 3}} {
				tampered := bytes.Clone(ct)
				for _, b := range bad {
					tampered[b*cbs+cbs/2] ^= 1
				}
				lowest := slicesMin(bad)
				dst := make([]byte, 0, len(plain))
				pt, err := ce.DecryptBlocks(dst, tampered, first, id[:])
				var cbe *CorruptBlockError
				if !errors.As(err, &cbe) || cbe.BlockNo != first+uint64(lowest) {
					t.Fatalf("bad %v: err = %v", bad, err)
				}
				if !bytes.Equal(pt, plain[:lowest*DefaultBS]) {
					t.Fatalf("bad %v: %d bytes returned", bad, len(pt))
				}
				if !allZero(dst[len(pt):cap(dst)]) {
					t.Fatalf("bad %v: plaintext left beyond the returned length", bad)
				}
			}
			if _, err := ce.EncryptBlocksDerived(nil, plain, 0, id[:], iv[:5]); !errors.Is(err, ErrBadNonce) {
				t.Errorf("short IV: %v", err)
			}
			if _, err := ce.EncryptBlockNonce(nil, plain[:10], 0, id[:], iv[:5]); !errors.Is(err, ErrBadNonce) {
				t.Errorf("short nonce: %v", err)
			}
		})
	}
}

func slicesMin(s []int) int {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

func TestDeriveBlockNonce(t *testing.T) {
	cases := []struct {
		iv    string
		block uint64
		want  string
	}{
		{"e01683d2594243feb1a501820556f035", 0, "e01683d2594243feb1a501820556f035"},
		{"e01683d2594243feb1a501820556f035", 1, "e01683d2594243feb1a501820556f036"},
		{"00000000000000000000000000000000", 0x0102, "00000000000000000000000000000102"},
		// Only bytes 8..15 count; the carry does not reach byte 7.
		{"0000000000000000ffffffffffffffff", 1, "00000000000000000000000000000000"},
		{"aaaaaaaaaaaaaaaafffffffffffffffe", 3, "aaaaaaaaaaaaaaaa0000000000000001"},
	}
	for _, c := range cases {
		got := DeriveBlockNonce([]byte{}, testutil.MustHex(t, c.iv), c.block)
		if got := bytesHex(got); got != c.want {
			t.Errorf("DeriveBlockNonce(%s, %d) = %s, want %s", c.iv, c.block, got, c.want)
		}
	}
}

func bytesHex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return string(out)
}

func TestPool(t *testing.T) {
	for _, c := range allCiphers {
		ce := newCE(t, c, testutil.MasterKeyHex, true)
		p, cb := ce.GetPBuf(), ce.GetCBuf()
		if len(*p) != 0 || cap(*p) != PoolBlocks*DefaultBS || cap(*p) != ce.PBufCap() {
			t.Errorf("%v: pbuf len %d cap %d", c, len(*p), cap(*p))
		}
		if len(*cb) != 0 || cap(*cb) != HeaderLen+PoolBlocks*ce.CipherBS() || cap(*cb) != ce.CBufCap() {
			t.Errorf("%v: cbuf len %d cap %d", c, len(*cb), cap(*cb))
		}
		// A full unaligned 1 MiB request fits without growing.
		plain := append(*p, make([]byte, PoolBlocks*DefaultBS)...)
		out := ce.EncryptBlocks(append(*cb, make([]byte, HeaderLen)...), plain, 0, make([]byte, 16))
		if &out[0] != &(*cb)[:1][0] {
			t.Errorf("%v: cbuf too small for %d blocks", c, PoolBlocks)
		}
		*p = plain[:5]
		ce.PutPBuf(p)
		ce.PutCBuf(cb)
		small := make([]byte, 10)
		ce.PutPBuf(&small) // dropped, not handed out later
		ce.PutCBuf(nil)
		for range 3 {
			if q := ce.GetPBuf(); len(*q) != 0 || cap(*q) != ce.PBufCap() {
				t.Errorf("%v: pool handed out len %d cap %d", c, len(*q), cap(*q))
			}
		}
	}
}

// The OpenSSL backends (when compiled in) interoperate with the Go ones:
// the same vectors decrypt, and what one seals the other opens, also
// through the parallel paths.
func TestOpenSSLBackend(t *testing.T) {
	forceParallel(t)
	mk := testutil.MasterKey()
	vectors := map[cryptocore.ContentCipher]string{
		cryptocore.AESGCM: `0002 420b04fae4bc38a8548393d366b9d635 e55fd73199ac809d2617ce9bb26a19c1
			38544c8e993d38c6691cda11 a7979226216685edf5d656c545c052f0`,
		cryptocore.XChaCha20Poly1305: `0002 d2091d7026e38b4d26924c28843f4902 9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d
			0a25c6e06b42a2504d6f2bab 3ce9baa002d31e96f6a2bb7113a9e52d`,
	}
	for c, vec := range vectors {
		t.Run(c.String(), func(t *testing.T) {
			cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: c, Backend: cryptocore.BackendOpenSSL, HKDF: true})
			if err != nil {
				t.Skipf("no OpenSSL backend: %v", err)
			}
			ossl, err := New(cc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			goCE := newCE(t, c, testutil.MasterKeyHex, true)
			file := testutil.MustHex(t, vec)
			h, err := ParseHeader(file[:HeaderLen])
			if err != nil {
				t.Fatal(err)
			}
			if pt, err := ossl.DecryptBlocks(nil, file[HeaderLen:], 0, h.ID[:]); err != nil || string(pt) != "hello world\n" {
				t.Fatalf("vector: %q, %v", pt, err)
			}
			plain := pattern(300*DefaultBS+7, 5)
			for _, pair := range [][2]*ContentEnc{{ossl, goCE}, {goCE, ossl}} {
				ct := pair[0].EncryptBlocks(nil, plain, 3, h.ID[:])
				pt, err := pair[1].DecryptBlocks(nil, ct, 3, h.ID[:])
				if err != nil || !bytes.Equal(pt, plain) {
					t.Fatalf("cross-backend round trip: %v", err)
				}
				ct[150*pair[0].CipherBS()+40] ^= 4
				pt, err = pair[1].DecryptBlocks(nil, ct, 3, h.ID[:])
				var cbe *CorruptBlockError
				if !errors.As(err, &cbe) || cbe.BlockNo != 153 || !bytes.Equal(pt, plain[:150*DefaultBS]) {
					t.Fatalf("tampering: %d bytes, %v", len(pt), err)
				}
			}
		})
	}
}
