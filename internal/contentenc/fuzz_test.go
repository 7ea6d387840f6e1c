package contentenc

import (
	"bytes"
	"errors"
	"testing"

	"gocryptfs/internal/testutil"
)

func FuzzParseHeader(f *testing.F) {
	f.Add(testutil.MustHex(f, "0002 95e7ef1ef9d7205ba8409fa6f9e4ba46"))
	f.Add(testutil.MustHex(f, "0003 95e7ef1ef9d7205ba8409fa6f9e4ba46"))
	f.Add(make([]byte, HeaderLen))
	f.Add(testutil.MustHex(f, "0002 00000000000000000000000000000000"))
	f.Add([]byte("MEnbl6pGKujQ2_GK7Vw1AjtSm7al"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, buf []byte) {
		h, err := ParseHeader(buf)
		if err != nil {
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("error does not wrap ErrBadHeader: %v", err)
			}
			return
		}
		if len(buf) != HeaderLen || h.Version != CurrentVersion || allZero(h.ID[:]) {
			t.Fatalf("accepted bad header %x as %+v", buf, h)
		}
		if !bytes.Equal(h.Pack(), buf) {
			t.Fatalf("Pack %x != input %x", h.Pack(), buf)
		}
	})
}

// FuzzDecryptBlocks feeds arbitrary ciphertext, block numbers and file IDs
// to DecryptBlocks with every cipher. It must never panic; on success the
// plaintext has exactly PlainLen bytes and every block re-encrypts (with
// its own nonce) to the input, so the plaintext is the authentic one; on
// error, the error wraps ErrCorruptBlock and only whole blocks before the
// bad one are returned, matching what they decrypt to on their own.
func FuzzDecryptBlocks(f *testing.F) {
	var ces []*ContentEnc
	for _, c := range allCiphers {
		ces = append(ces, newCE(f, c, testutil.MasterKeyHex, true))
	}
	id := testutil.MustHex(f, "95e7ef1ef9d7205ba8409fa6f9e4ba46")
	for i, ce := range ces {
		plain := pattern(2*DefaultBS+50, byte(i))
		ct := ce.EncryptBlocks(nil, plain, 0, id)
		f.Add(ct, uint64(0), id, uint8(i))
		f.Add(ct[:100], uint64(0), id, uint8(i))
		f.Add(ct, uint64(1), id, uint8(i))
		hole := make([]byte, ce.CipherBS())
		f.Add(append(bytes.Clone(hole), ct[ce.CipherBS():]...), uint64(0), id, uint8(i))
		f.Add(hole[:ce.CipherBS()-1], uint64(5), id, uint8(i))
	}
	f.Add(testutil.MustHex(f, "9d0df759629108b2575bb1eb01dd67ad 74 b8c8a3a7c00e246b048bfee30aeda6f6"), uint64(0), id, uint8(0))
	f.Add([]byte{1, 2, 3}, uint64(1<<63), []byte{}, uint8(2))

	f.Fuzz(func(t *testing.T, ct []byte, first uint64, fileID []byte, which uint8) {
		ce := ces[int(which)%len(ces)]
		prefix := []byte("pfx")
		out, err := ce.DecryptBlocks(bytes.Clone(prefix), ct, first, fileID)
		if !bytes.HasPrefix(out, prefix) {
			t.Fatal("prefix of dst destroyed")
		}
		pt := out[len(prefix):]
		cbs := ce.CipherBS()
		block0OK := err == nil
		if err != nil {
			var cbe *CorruptBlockError
			if !errors.Is(err, ErrCorruptBlock) || !errors.As(err, &cbe) {
				t.Fatalf("error does not wrap ErrCorruptBlock: %v", err)
			}
			bad := cbe.BlockNo - first
			block0OK = bad > 0
			if bad*uint64(cbs) >= uint64(len(ct)) || uint64(len(pt)) != bad*DefaultBS {
				t.Fatalf("bad block #%d (index %d), but %d bytes returned for %d bytes of input", cbe.BlockNo, bad, len(pt), len(ct))
			}
		} else if len(pt) != ce.PlainLen(len(ct)) {
			t.Fatalf("%d bytes of plaintext for %d bytes of ciphertext, want %d", len(pt), len(ct), ce.PlainLen(len(ct)))
		}
		// Every block returned must be the authentic plaintext of its
		// ciphertext block.
		for i := 0; i*DefaultBS < len(pt); i++ {
			c := ct[i*cbs : min((i+1)*cbs, len(ct))]
			p := pt[i*DefaultBS : min((i+1)*DefaultBS, len(pt))]
			b := first + uint64(i)
			if len(c) == cbs && allZero(c) {
				if len(p) != DefaultBS || !allZero(p) {
					t.Fatalf("hole block %d decrypted to non-zero data", i)
				}
				continue
			}
			re, err := ce.EncryptBlockNonce(nil, p, b, fileID, c[:ce.NonceSize()])
			if err != nil || !bytes.Equal(re, c) {
				t.Fatalf("block %d: plaintext does not re-encrypt to the ciphertext (%v)", i, err)
			}
		}
		// The single-block API agrees on the first block.
		if len(ct) > 0 {
			c := ct[:min(cbs, len(ct))]
			p, err1 := ce.DecryptBlock(nil, c, first, fileID)
			if (err1 == nil) != block0OK {
				t.Fatalf("DecryptBlock and DecryptBlocks disagree on block 0: %v / %v", err1, err)
			}
			if err1 == nil && !bytes.Equal(p, pt[:len(p)]) {
				t.Fatal("DecryptBlock returned other plaintext")
			}
		}
	})
}
