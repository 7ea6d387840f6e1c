package contentenc

import (
	"bytes"
	"crypto/cipher"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/stupidgcm"
	"gocryptfs/internal/testutil"
)

// batchCiphers are the ciphers with an OpenSSL backend.
var batchCiphers = []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.XChaCha20Poly1305}

// perBlock hides cryptocore.BatchAEAD, so that contentenc takes the
// per-block path with the same (OpenSSL) AEAD: the behaviour before the
// batch path existed, which the batch path must reproduce exactly.
type perBlock struct{ cipher.AEAD }

// backendTrio is one cipher as Go, OpenSSL per block and OpenSSL batch.
type backendTrio struct {
	goCE, perBlock, batch *ContentEnc
}

// newTrio builds the three ContentEncs for cipher c, skipping the test
// when this build has no OpenSSL.
func newTrio(t testing.TB, c cryptocore.ContentCipher) backendTrio {
	t.Helper()
	tr, ok := makeTrio(t, c)
	if !ok {
		t.Skip("built without OpenSSL")
	}
	return tr
}

// makeTrio is newTrio without the skip: ok is false without OpenSSL.
func makeTrio(t testing.TB, c cryptocore.ContentCipher) (tr backendTrio, ok bool) {
	t.Helper()
	if !stupidgcm.Available {
		return tr, false
	}
	cc, err := cryptocore.New(testutil.MasterKey(), cryptocore.Options{Cipher: c, Backend: cryptocore.BackendOpenSSL, HKDF: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cc.AEAD.(cryptocore.BatchAEAD); !ok {
		t.Fatalf("%v OpenSSL AEAD %T does not implement BatchAEAD", c, cc.AEAD)
	}
	batch, err := New(cc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hidden := *cc
	hidden.AEAD = perBlock{cc.AEAD}
	pb, err := New(&hidden, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return backendTrio{goCE: newCE(t, c, testutil.MasterKeyHex, true), perBlock: pb, batch: batch}, true
}

// errText renders an error for comparison; nil is "<nil>".
func errText(err error) string { return fmt.Sprint(err) }

// Derived-nonce encryption is deterministic, so the batch path must produce
// byte for byte what the per-block paths produce, for every length and
// split over workers, including block numbers and nonces that wrap.
func TestBatchEncryptMatchesPerBlock(t *testing.T) {
	for _, c := range batchCiphers {
		t.Run(c.String(), func(t *testing.T) {
			tr := newTrio(t, c)
			id := RandomHeader(nil).ID
			iv := bytes.Repeat([]byte{0xff}, tr.batch.NonceSize())
			iv[0] = 7
			lengths := []int{1, DefaultBS - 1, DefaultBS, DefaultBS + 1, 15 * DefaultBS, 16*DefaultBS - 3,
				256 * DefaultBS, 257*DefaultBS - 100, (batchBlocks+3)*DefaultBS + 9}
			for _, procs := range []int{1, 2, 4} {
				old := runtime.GOMAXPROCS(procs)
				for _, n := range lengths {
					plain := pattern(n, byte(n))
					for _, first := range []uint64{0, 3, 1<<64 - 5} {
						want, err := tr.goCE.EncryptBlocksDerived([]byte("x"), plain, first, id[:], iv)
						if err != nil {
							t.Fatal(err)
						}
						for _, ce := range []*ContentEnc{tr.perBlock, tr.batch} {
							got, err := ce.EncryptBlocksDerived([]byte("x"), plain, first, id[:], iv)
							if err != nil || !bytes.Equal(got, want) {
								t.Fatalf("GOMAXPROCS=%d len %d first %d: output differs (%v)", procs, n, first, err)
							}
						}
						// Random nonces: the batch output opens with Go.
						ct := tr.batch.EncryptBlocks(nil, plain, first, id[:])
						if len(ct) != tr.batch.CipherLen(n) {
							t.Fatalf("len %d: %d bytes of ciphertext, want %d", n, len(ct), tr.batch.CipherLen(n))
						}
						if pt, err := tr.goCE.DecryptBlocks(nil, ct, first, id[:]); err != nil || !bytes.Equal(pt, plain) {
							t.Fatalf("GOMAXPROCS=%d len %d: random-nonce batch output does not open with Go: %v", procs, n, err)
						}
					}
				}
				runtime.GOMAXPROCS(old)
			}
		})
	}
}

// Every random nonce of a batch is distinct and none is all zero.
func TestBatchRandomNonces(t *testing.T) {
	for _, c := range batchCiphers {
		t.Run(c.String(), func(t *testing.T) {
			tr := newTrio(t, c)
			forceParallel(t)
			ce := tr.batch
			const nblocks = 600
			ct := ce.EncryptBlocks(nil, make([]byte, nblocks*DefaultBS), 0, make([]byte, FileIDLen))
			seen := make(map[string]bool)
			for i := range nblocks {
				nonce := string(ct[i*ce.CipherBS() : i*ce.CipherBS()+ce.NonceSize()])
				if seen[nonce] || allZero([]byte(nonce)) {
					t.Fatalf("block %d: repeated or all-zero nonce", i)
				}
				seen[nonce] = true
			}
		})
	}
}

// blockEdit changes one block of a ciphertext built from nblocks full
// blocks (the last one possibly cut by the edit).
type blockEdit struct {
	block int
	kind  string // "hole", "flip", "zero-nonce", "cut"
	keep  int    // for "cut": bytes of the last block kept
}

// Decryption through the batch path gives the same plaintext, the same
// error (text and block number) and the same returned length as the
// per-block path, with holes and damage anywhere: at the start, in the
// middle and at the end of a worker's range, next to each other, and in
// the short last block.
func TestBatchDecryptMatchesPerBlock(t *testing.T) {
	const nblocks = 200
	cases := []struct {
		name  string
		edits []blockEdit
	}{
		{"clean", nil},
		{"hole first", []blockEdit{{block: 0, kind: "hole"}}},
		{"hole middle", []blockEdit{{block: 57, kind: "hole"}}},
		{"hole at share boundary", []blockEdit{{block: nblocks / 2, kind: "hole"}, {block: nblocks/2 - 1, kind: "hole"}}},
		{"hole last", []blockEdit{{block: nblocks - 1, kind: "hole"}}},
		{"holes everywhere", []blockEdit{{block: 0, kind: "hole"}, {block: 1, kind: "hole"}, {block: 30, kind: "hole"},
			{block: 31, kind: "hole"}, {block: 120, kind: "hole"}, {block: nblocks - 1, kind: "hole"}}},
		{"all holes but one", func() []blockEdit {
			var e []blockEdit
			for i := range nblocks {
				if i != 77 {
					e = append(e, blockEdit{block: i, kind: "hole"})
				}
			}
			return e
		}()},
		{"flip first", []blockEdit{{block: 0, kind: "flip"}}},
		{"flip middle", []blockEdit{{block: 73, kind: "flip"}}},
		{"flip after hole", []blockEdit{{block: 72, kind: "hole"}, {block: 73, kind: "flip"}}},
		{"flip before hole", []blockEdit{{block: 73, kind: "flip"}, {block: 74, kind: "hole"}}},
		{"flip in both shares", []blockEdit{{block: 150, kind: "flip"}, {block: 20, kind: "flip"}}},
		{"flip last", []blockEdit{{block: nblocks - 1, kind: "flip"}}},
		{"zero nonce middle", []blockEdit{{block: 90, kind: "zero-nonce"}}},
		{"zero nonce after hole", []blockEdit{{block: 9, kind: "hole"}, {block: 10, kind: "zero-nonce"}}},
		{"zero nonce last", []blockEdit{{block: nblocks - 1, kind: "zero-nonce"}}},
		{"cut last to nonce-1", []blockEdit{{block: nblocks - 1, kind: "cut", keep: -1}}},
		{"cut last to nonce", []blockEdit{{block: nblocks - 1, kind: "cut", keep: 0}}},
		{"cut last to overhead-1", []blockEdit{{block: nblocks - 1, kind: "cut", keep: -2}}},
		{"cut last to overhead", []blockEdit{{block: nblocks - 1, kind: "cut", keep: -3}}},
		{"cut last to overhead+1", []blockEdit{{block: nblocks - 1, kind: "cut", keep: -4}}},
		{"cut last, hole before", []blockEdit{{block: nblocks - 2, kind: "hole"}, {block: nblocks - 1, kind: "cut", keep: -4}}},
	}
	for _, c := range batchCiphers {
		t.Run(c.String(), func(t *testing.T) {
			tr := newTrio(t, c)
			ce := tr.batch
			cbs, nl := ce.CipherBS(), ce.NonceSize()
			id := RandomHeader(nil).ID
			plain := pattern(nblocks*DefaultBS, 9)
			clean := ce.EncryptBlocks(nil, plain, 40, id[:])
			for _, tc := range cases {
				ct := bytes.Clone(clean)
				for _, e := range tc.edits {
					blk := ct[e.block*cbs : (e.block+1)*cbs]
					switch e.kind {
					case "hole":
						clear(blk)
					case "flip":
						blk[cbs/3] ^= 0x40
					case "zero-nonce":
						clear(blk[:nl])
					case "cut":
						keep := map[int]int{-1: nl - 1, 0: nl, -2: ce.BlockOverhead() - 1, -3: ce.BlockOverhead(), -4: ce.BlockOverhead() + 1}[e.keep]
						ct = ct[:e.block*cbs+keep]
					}
				}
				for _, procs := range []int{1, 2, 3} {
					old := runtime.GOMAXPROCS(procs)
					want, wantErr := tr.perBlock.DecryptBlocks([]byte("pre"), ct, 40, id[:])
					goOut, goErr := tr.goCE.DecryptBlocks([]byte("pre"), ct, 40, id[:])
					dst := append(make([]byte, 0, 3+len(plain)+100), "pre"...)
					got, err := ce.DecryptBlocks(dst, ct, 40, id[:])
					runtime.GOMAXPROCS(old)
					if errText(err) != errText(wantErr) || !bytes.Equal(got, want) {
						t.Fatalf("%s, GOMAXPROCS=%d: batch gave %d bytes, %v; per-block %d bytes, %v",
							tc.name, procs, len(got), err, len(want), wantErr)
					}
					// Go's XChaCha20-Poly1305 words its authentication
					// error differently; the block must be the same.
					if blockOf(goErr) != blockOf(wantErr) || !bytes.Equal(goOut, want) {
						t.Fatalf("%s: Go backend gave %d bytes, %v; OpenSSL per-block %d bytes, %v",
							tc.name, len(goOut), goErr, len(want), wantErr)
					}
					if !allZero(dst[len(got):cap(dst)]) {
						t.Fatalf("%s: plaintext left beyond the returned length", tc.name)
					}
					if tc.name == "flip middle" && blockOf(err) != 40+73 {
						t.Fatalf("%s: err = %v, want corrupt block #%d", tc.name, err, 40+73)
					}
				}
			}
		})
	}
}

// blockOf returns the block number of a *CorruptBlockError, or -1.
func blockOf(err error) int64 {
	var cbe *CorruptBlockError
	if !errors.As(err, &cbe) {
		return -1
	}
	return int64(cbe.BlockNo)
}

// counting is a BatchAEAD that counts the calls of each kind. Around an
// AEAD without a batch interface (Go's) it batches with stupidgcm's
// loop, so the batch logic of this package is tested without OpenSSL too.
type counting struct {
	cipher.AEAD
	seal, open, sealBatch, openBatch atomic.Int64
}

func (c *counting) Seal(dst, nonce, plaintext, ad []byte) []byte {
	c.seal.Add(1)
	return c.AEAD.Seal(dst, nonce, plaintext, ad)
}

func (c *counting) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	c.open.Add(1)
	return c.AEAD.Open(dst, nonce, ciphertext, ad)
}

func (c *counting) SealBatch(dst, nonces, plaintext []byte, bs int, first uint64, fileID []byte) []byte {
	c.sealBatch.Add(1)
	return stupidgcm.SealBatch(c.AEAD, dst, nonces, plaintext, bs, first, fileID)
}

func (c *counting) OpenBatch(dst, ciphertext []byte, bs int, first uint64, fileID []byte) ([]byte, error) {
	c.openBatch.Add(1)
	return stupidgcm.OpenBatch(c.AEAD, dst, ciphertext, bs, first, fileID)
}

func (c *counting) reset() {
	c.seal.Store(0)
	c.open.Store(0)
	c.sealBatch.Store(0)
	c.openBatch.Store(0)
}

// Each worker makes one batch call for its share; holes and bad blocks
// split a share into runs, and only the blocks that the batch interface
// cannot judge (all-zero nonce, too short) go through the per-block path.
// Runs with Go's AEADs below the counter, so it needs no OpenSSL.
func TestBatchCallCounts(t *testing.T) {
	for _, c := range batchCiphers {
		t.Run(c.String(), func(t *testing.T) {
			base := newCE(t, c, testutil.MasterKeyHex, true)
			cc := *base.cc
			cnt := &counting{AEAD: cc.AEAD}
			cc.AEAD = cnt
			ce, err := New(&cc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cbs := ce.CipherBS()
			id := RandomHeader(nil).ID
			iv := make([]byte, ce.NonceSize())
			iv[3] = 1
			type counts struct{ seal, open, sealBatch, openBatch int64 }
			get := func() counts {
				return counts{cnt.seal.Load(), cnt.open.Load(), cnt.sealBatch.Load(), cnt.openBatch.Load()}
			}
			const nblocks = 256
			plain := pattern(nblocks*DefaultBS-1, 2)
			big := pattern((batchBlocks+10)*DefaultBS, 3)
			for _, procs := range []int{1, 2, 4} {
				old := runtime.GOMAXPROCS(procs)
				w := int64(workers(nblocks))
				cnt.reset()
				ct := ce.EncryptBlocks(nil, plain, 0, id[:])
				// Seal and Open count only per-block calls by contentenc:
				// stupidgcm's loop calls the wrapped AEAD directly.
				if got := get(); got != (counts{sealBatch: w}) {
					t.Errorf("GOMAXPROCS=%d EncryptBlocks: %+v, want %d batch calls", procs, got, w)
				}
				cnt.reset()
				ce.EncryptBlocksDerived(nil, plain, 0, id[:], iv)
				if got := get(); got != (counts{sealBatch: w}) {
					t.Errorf("GOMAXPROCS=%d EncryptBlocksDerived: %+v, want %d batch calls", procs, got, w)
				}
				// A single worker with more than batchBlocks blocks takes
				// two calls.
				cnt.reset()
				bw := int64(workers(batchBlocks + 10))
				ce.EncryptBlocks(nil, big, 0, id[:])
				if want := max(bw, 2); procs == 1 && get().sealBatch != want {
					t.Errorf("GOMAXPROCS=1, %d blocks: %+v, want %d batch calls", batchBlocks+10, get(), want)
				}
				cnt.reset()
				if _, err := ce.DecryptBlocks(nil, ct, 0, id[:]); err != nil {
					t.Fatal(err)
				}
				if got := get(); got != (counts{openBatch: w}) {
					t.Errorf("GOMAXPROCS=%d DecryptBlocks: %+v, want %d batch calls", procs, got, w)
				}
				// Holes at block 10 and 11 (inside the first share):
				// that share becomes runs [0,10) and [12,hi).
				holes := bytes.Clone(ct)
				clear(holes[10*cbs : 12*cbs])
				cnt.reset()
				if _, err := ce.DecryptBlocks(nil, holes, 0, id[:]); err != nil {
					t.Fatal(err)
				}
				if got := get(); got != (counts{openBatch: w + 1}) {
					t.Errorf("GOMAXPROCS=%d DecryptBlocks with holes: %+v, want %d batch calls", procs, got, w+1)
				}
				runtime.GOMAXPROCS(old)
			}
		})
	}
}

// The batch paths allocate nothing when sequential and a constant few
// objects when parallel, as the per-block paths do.
func TestBatchAllocs(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, c := range batchCiphers {
		t.Run(c.String(), func(t *testing.T) {
			tr := newTrio(t, c)
			ce := tr.batch
			id := RandomHeader(nil).ID
			iv := make([]byte, ce.NonceSize())
			iv[0] = 1
			cbuf, pbuf := ce.GetCBuf(), ce.GetPBuf()
			defer ce.PutCBuf(cbuf)
			defer ce.PutPBuf(pbuf)
			for _, procs := range []int{1, 2, 4} {
				old := runtime.GOMAXPROCS(procs)
				for _, nblocks := range []int{1, parallelMinBlocks - 1, 256, PoolBlocks} {
					plain := pattern(nblocks*DefaultBS-5, 1)
					ct := ce.EncryptBlocks(nil, plain, 100, id[:])
					// A hole in the middle splits the batch.
					withHole := bytes.Clone(ct)
					clear(withHole[nblocks/2*ce.CipherBS() : (nblocks/2+1)*ce.CipherBS()])
					measure, limit := allocMeasure(nblocks)
					for _, tc := range []struct {
						name string
						fn   func()
					}{
						{"EncryptBlocks", func() { ce.EncryptBlocks(*cbuf, plain, 100, id[:]) }},
						{"EncryptBlocksDerived", func() { ce.EncryptBlocksDerived(*cbuf, plain, 100, id[:], iv) }},
						{"DecryptBlocks", func() {
							if _, err := ce.DecryptBlocks(*pbuf, ct, 100, id[:]); err != nil {
								t.Fatal(err)
							}
						}},
						{"DecryptBlocks with hole", func() {
							if nblocks > 1 {
								if _, err := ce.DecryptBlocks(*pbuf, withHole, 100, id[:]); err != nil {
									t.Fatal(err)
								}
							}
						}},
					} {
						if a := measure(20, tc.fn); a > limit {
							t.Errorf("GOMAXPROCS=%d %s of %d blocks: %v allocations, want ≤ %v", procs, tc.name, nblocks, a, limit)
						}
					}
				}
				runtime.GOMAXPROCS(old)
			}
		})
	}
}

// A file ID (and reverse-mode IV) on the caller's stack does not escape:
// multi-block calls with one allocate nothing, with every backend.
func TestAllocsStackFileID(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	ces := map[string]*ContentEnc{}
	for _, c := range allCiphers {
		ces[c.String()+"/Go"] = newCE(t, c, testutil.MasterKeyHex, true)
	}
	for _, c := range batchCiphers {
		if tr, ok := makeTrio(t, c); ok {
			ces[c.String()+"/OpenSSL"] = tr.batch
		}
	}
	for name, ce := range ces {
		t.Run(name, func(t *testing.T) {
			skipUnderRace(t)
			plain := pattern(10*DefaultBS+1, 4)
			ct := ce.EncryptBlocks(nil, plain, 5, make([]byte, FileIDLen))
			cbuf := make([]byte, 0, len(ct))
			pbuf := make([]byte, 0, len(plain))
			for _, tc := range []struct {
				name string
				fn   func()
			}{
				{"EncryptBlocks", func() {
					var fid [FileIDLen]byte
					ce.EncryptBlocks(cbuf, plain, 5, fid[:])
				}},
				{"EncryptBlocksDerived", func() {
					var fid [FileIDLen]byte
					var iv [24]byte
					iv[0] = 1
					ce.EncryptBlocksDerived(cbuf, plain, 5, fid[:], iv[:ce.NonceSize()])
				}},
				{"DecryptBlocks", func() {
					var fid [FileIDLen]byte
					if _, err := ce.DecryptBlocks(pbuf, ct, 5, fid[:]); err != nil {
						t.Fatal(err)
					}
				}},
			} {
				// AllocsPerRun runs with GOMAXPROCS=1: 11 blocks are
				// sequential anyway.
				if a := testing.AllocsPerRun(50, tc.fn); a != 0 {
					t.Errorf("%s: %v allocations, want 0", tc.name, a)
				}
			}
		})
	}
}

// FuzzBatchDecrypt checks on arbitrary ciphertext that the batch path
// returns exactly what the per-block path returns (plaintext, error text).
func FuzzBatchDecrypt(f *testing.F) {
	var trios []backendTrio
	for _, c := range batchCiphers {
		trios = append(trios, newTrio(f, c))
	}
	id := testutil.MustHex(f, "95e7ef1ef9d7205ba8409fa6f9e4ba46")
	for i, tr := range trios {
		ce := tr.batch
		ct := ce.EncryptBlocks(nil, pattern(20*DefaultBS+50, byte(i)), 0, id)
		f.Add(ct, uint64(0), uint8(i))
		withHole := bytes.Clone(ct)
		clear(withHole[3*ce.CipherBS() : 4*ce.CipherBS()])
		f.Add(withHole, uint64(0), uint8(i))
		f.Add(ct[:5*ce.CipherBS()+ce.BlockOverhead()], uint64(0), uint8(i))
		f.Add(ct[:100], uint64(1), uint8(i))
	}
	f.Fuzz(func(t *testing.T, ct []byte, first uint64, which uint8) {
		tr := trios[int(which)%len(trios)]
		want, wantErr := tr.perBlock.DecryptBlocks(nil, ct, first, id)
		got, err := tr.batch.DecryptBlocks(nil, ct, first, id)
		if errText(err) != errText(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("batch: %d bytes, %v; per-block: %d bytes, %v", len(got), err, len(want), wantErr)
		}
	})
}
