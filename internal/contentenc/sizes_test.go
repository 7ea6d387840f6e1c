package contentenc

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// docs/format.md 4.5 worked examples, plaintext → ciphertext, both directions.
func TestSizeMappingTable(t *testing.T) {
	table := []struct{ plain, gcm, xchacha uint64 }{
		{0, 0, 0},
		{1, 51, 59},
		{3, 53, 61},
		{12, 62, 70},
		{4095, 4145, 4153},
		{4096, 4146, 4154},
		{4097, 4179, 4195},
		{5000, 5082, 5098},
		{8192, 8274, 8290},
		{10000, 10114, 10138},
		{20001, 20179, 20219}, // TV-8 hole3 (GCM measured; XChaCha computed)
		{9001, 9115, 9139},    // TV-8 hole4
	}
	gcm := newCE(t, cryptocore.AESGCM, testutil.MasterKeyHex, true)
	siv := newCE(t, cryptocore.AESSIV, testutil.MasterKeyHex, true)
	xc := newCE(t, cryptocore.XChaCha20Poly1305, testutil.MasterKeyHex, true)
	for _, r := range table {
		for _, c := range []struct {
			ce   *ContentEnc
			want uint64
		}{{gcm, r.gcm}, {siv, r.gcm}, {xc, r.xchacha}} {
			if got := c.ce.PlainSizeToCipherSize(r.plain); got != c.want {
				t.Errorf("%v: PlainSizeToCipherSize(%d) = %d, want %d", c.ce.Cipher(), r.plain, got, c.want)
			}
			p, prob := c.ce.CipherSizeToPlainSizeCheck(c.want)
			if p != r.plain || prob != SizeOK {
				t.Errorf("%v: CipherSizeToPlainSize(%d) = %d (%v), want %d", c.ce.Cipher(), c.want, p, prob, r.plain)
			}
		}
	}
}

// docs/format.md 4.5 reverse-direction examples and the corrupt sizes.
func TestCipherSizeToPlainSizeCorrupt(t *testing.T) {
	gcm := newCE(t, cryptocore.AESGCM, testutil.MasterKeyHex, true)
	xc := newCE(t, cryptocore.XChaCha20Poly1305, testutil.MasterKeyHex, true)
	type row struct {
		c, want uint64
		problem SizeProblem
	}
	rows := []row{
		{51, 1, SizeOK},
		{4146, 4096, SizeOK},
		{4179, 4097, SizeOK},
		{4166, 4097, SizeIncompleteBlock}, // last block only 20 bytes
		{10, 0, SizeTruncatedHeader},
		{18, 0, SizeOK},
		{18 + 1, 1, SizeIncompleteBlock},
		{18 + 32, 1, SizeIncompleteBlock},
		{18 + 33, 1, SizeOK},
		{18 + 4128 + 32, 4097, SizeIncompleteBlock},
		{18 + 2*4128 + 1, 8193, SizeIncompleteBlock},
	}
	for c := uint64(1); c < 18; c++ {
		rows = append(rows, row{c, 0, SizeTruncatedHeader})
	}
	for _, r := range rows {
		p, prob := gcm.CipherSizeToPlainSizeCheck(r.c)
		if p != r.want || prob != r.problem {
			t.Errorf("GCM %d: got %d (%v), want %d (%v)", r.c, p, prob, r.want, r.problem)
		}
		if gcm.CipherSizeToPlainSize(r.c) != r.want {
			t.Errorf("GCM %d: CipherSizeToPlainSize disagrees", r.c)
		}
	}
	for _, r := range []row{
		{59, 1, SizeOK},
		{18 + 40, 1, SizeIncompleteBlock},
		{18 + 4136 + 20, 4097, SizeIncompleteBlock},
		{18 + 4136 + 41, 4097, SizeOK},
		{5, 0, SizeTruncatedHeader},
	} {
		p, prob := xc.CipherSizeToPlainSizeCheck(r.c)
		if p != r.want || prob != r.problem {
			t.Errorf("XChaCha %d: got %d (%v), want %d (%v)", r.c, p, prob, r.want, r.problem)
		}
	}
}

// Every plaintext size maps to a ciphertext size that maps back, across
// several block boundaries, and the extremes do not misbehave.
func TestSizeMappingRoundTrip(t *testing.T) {
	for _, c := range allCiphers {
		ce := newCE(t, c, testutil.MasterKeyHex, true)
		for p := uint64(0); p < 5*DefaultBS+3; p++ {
			cs := ce.PlainSizeToCipherSize(p)
			if back, prob := ce.CipherSizeToPlainSizeCheck(cs); back != p || prob != SizeOK {
				t.Fatalf("%v: %d → %d → %d (%v)", c, p, cs, back, prob)
			}
			if p > 0 && int(cs) != HeaderLen+ce.CipherLen(int(p)) {
				t.Fatalf("%v: CipherLen(%d) disagrees", c, p)
			}
			if p > 0 && ce.PlainLen(int(cs)-HeaderLen) != int(p) {
				t.Fatalf("%v: PlainLen(%d) disagrees", c, cs-HeaderLen)
			}
		}
		maxP := uint64(math.MaxInt64)
		cs := ce.PlainSizeToCipherSize(maxP)
		if cs < maxP {
			t.Errorf("%v: PlainSizeToCipherSize(MaxInt64) overflowed to %d", c, cs)
		}
		if back := ce.CipherSizeToPlainSize(cs); back != maxP {
			t.Errorf("%v: MaxInt64 → %d → %d", c, cs, back)
		}
		_ = ce.CipherSizeToPlainSize(math.MaxUint64) // must not panic
	}
}

func TestExplodePlainRange(t *testing.T) {
	cases := []struct {
		off, length uint64
		want        []BlockPart
	}{
		{0, 0, nil},
		{5000, 0, nil},
		{0, 1, []BlockPart{{0, 0, 1}}},
		{0, 4096, []BlockPart{{0, 0, 4096}}},
		{4095, 1, []BlockPart{{0, 4095, 1}}},
		{4095, 2, []BlockPart{{0, 4095, 1}, {1, 0, 1}}},
		{4096, 4096, []BlockPart{{1, 0, 4096}}},
		{100, 10000, []BlockPart{{0, 100, 3996}, {1, 0, 4096}, {2, 0, 1908}}},
		{9000, 1, []BlockPart{{2, 808, 1}}},
		{math.MaxUint64 - 1, 5, []BlockPart{{math.MaxUint64 / 4096, 4094, 1}}}, // cut at 2^64-1
	}
	for _, c := range cases {
		got := ExplodePlainRange(c.off, c.length)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ExplodePlainRange(%d, %d) = %v, want %v", c.off, c.length, got, c.want)
		}
		first, count := BlockRange(c.off, c.length)
		if int(count) != len(c.want) || (count > 0 && first != c.want[0].BlockNo) {
			t.Errorf("BlockRange(%d, %d) = %d, %d", c.off, c.length, first, count)
		}
		var total uint64
		for i, p := range got {
			total += uint64(p.Length)
			wantPartial := p.Skip != 0 || p.Length != DefaultBS
			if p.IsPartial() != wantPartial || p.End() != p.Skip+p.Length || p.PlainOff() != p.BlockNo*DefaultBS {
				t.Errorf("part %d %+v: helpers disagree", i, p)
			}
			if i > 0 && (p.Skip != 0 || got[i-1].End() != DefaultBS) {
				t.Errorf("parts %d,%d not contiguous", i-1, i)
			}
		}
		if c.off < math.MaxUint64-c.length && total != c.length {
			t.Errorf("parts cover %d bytes, want %d", total, c.length)
		}
	}
	// The append form reuses the caller's buffer.
	var buf [PoolBlocks]BlockPart
	if a := testing.AllocsPerRun(100, func() { _ = AppendPlainRange(buf[:0], 123, 1<<20) }); a != 0 {
		t.Errorf("AppendPlainRange allocates %v times", a)
	}
	if got := AppendPlainRange(buf[:0], 123, 1<<20); len(got) != PoolBlocks {
		t.Errorf("unaligned 1 MiB touches %d blocks, want %d", len(got), PoolBlocks)
	}
}

func TestOffsets(t *testing.T) {
	gcm := newCE(t, cryptocore.AESGCM, testutil.MasterKeyHex, true)
	xc := newCE(t, cryptocore.XChaCha20Poly1305, testutil.MasterKeyHex, true)
	cases := []struct {
		ce     *ContentEnc
		block  uint64
		cipher uint64
	}{
		{gcm, 0, 18}, {gcm, 1, 4146}, {gcm, 2, 8274}, {xc, 1, 4154}, {xc, 2, 8290},
	}
	for _, c := range cases {
		if got := c.ce.BlockNoToCipherOff(c.block); got != c.cipher {
			t.Errorf("%v BlockNoToCipherOff(%d) = %d, want %d", c.ce.Cipher(), c.block, got, c.cipher)
		}
		for _, off := range []uint64{c.cipher, c.cipher + uint64(c.ce.CipherBS()) - 1} {
			if got := c.ce.CipherOffToBlockNo(off); got != c.block {
				t.Errorf("%v CipherOffToBlockNo(%d) = %d, want %d", c.ce.Cipher(), off, got, c.block)
			}
		}
		if got := BlockNoToPlainOff(c.block); got != c.block*4096 {
			t.Errorf("BlockNoToPlainOff(%d) = %d", c.block, got)
		}
		if PlainOffToBlockNo(c.block*4096+4095) != c.block {
			t.Errorf("PlainOffToBlockNo wrong for block %d", c.block)
		}
	}
	if gcm.CipherOffToBlockNo(5) != 0 {
		t.Error("offset inside the header must map to block 0")
	}
	if off, n := cipherRange(gcm, 4095, 2); off != 18 || n != 2*4128 {
		t.Errorf("cipherRange(4095, 2) = %d, %d", off, n)
	}
	if _, n := cipherRange(gcm, 7, 0); n != 0 {
		t.Errorf("cipherRange of empty range = %d bytes", n)
	}
	// CipherExtent ends where the range's data ends: a partial last block
	// takes its bytes plus nonce and tag, not a whole ciphertext block.
	for _, c := range []struct{ off, n, cOff, cLen uint64 }{
		{0, 30, 18, 16 + 30 + 16},
		{0, 4096, 18, 4128},
		{0, 5000, 18, 4128 + 16 + 904 + 16},
		{5000, 30, 18 + 4128, 16 + 934 + 16},
		{4000, 200, 18, 4128 + 16 + 104 + 16},
		{8192, 4096, 18 + 2*4128, 4128},
		{7, 0, 18, 0},
	} {
		if off, n := gcm.CipherExtent(c.off, c.n); off != c.cOff || n != c.cLen {
			t.Errorf("CipherExtent(%d, %d) = %d, %d; want %d, %d", c.off, c.n, off, n, c.cOff, c.cLen)
		}
	}
	if gcm.PlainBS() != 4096 || gcm.CipherBS() != 4128 || gcm.BlockOverhead() != 32 || gcm.NonceSize() != 16 {
		t.Error("GCM geometry")
	}
	if xc.CipherBS() != 4136 || xc.BlockOverhead() != 40 || xc.NonceSize() != 24 {
		t.Error("XChaCha geometry")
	}
}

func TestMergeBlocks(t *testing.T) {
	cases := []struct {
		old, new string
		off      int
		want     string
	}{
		{"", "abc", 0, "abc"},
		{"", "abc", 2, "\x00\x00abc"},
		{"hello", "J", 0, "Jello"},
		{"hello", "LLO", 2, "heLLO"},
		{"hello", "LLO!", 2, "heLLO!"},
		{"hello", "x", 7, "hello\x00\x00x"},
		{"hello", "", 3, "hello"},
		{"hello", "", 7, "hello\x00\x00"},
	}
	for _, c := range cases {
		got := MergeBlocks([]byte(c.old), []byte(c.new), c.off)
		if string(got) != c.want {
			t.Errorf("MergeBlocks(%q, %q, %d) = %q, want %q", c.old, c.new, c.off, got, c.want)
		}
	}
	// In place: stale bytes in the spare capacity must not show through.
	buf := make([]byte, 3, DefaultBS)
	copy(buf[:8], "abcSTALE")
	got := MergeBlocks(buf, []byte("Z"), 6)
	if !bytes.Equal(got, []byte("abc\x00\x00\x00Z")) || &got[0] != &buf[0] {
		t.Errorf("in-place merge = %q", got)
	}
	src := make([]byte, 100)
	if a := testing.AllocsPerRun(100, func() { _ = MergeBlocks(buf[:100], src, 3996) }); a != 0 {
		t.Errorf("MergeBlocks with capacity allocates %v times", a)
	}
}

// cipherRange returns the ciphertext byte range [cOff, cOff+cLen) that
// holds the whole blocks touched by the plaintext range [offset,
// offset+length): what a reader fetches before decrypting (docs/format.md
// 4.6). It may extend past the end of the file.
func cipherRange(ce *ContentEnc, offset, length uint64) (cOff, cLen uint64) {
	first, count := BlockRange(offset, length)
	return ce.BlockNoToCipherOff(first), count * uint64(ce.CipherBS())
}
