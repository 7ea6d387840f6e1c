package contentenc

import (
	"runtime"
	"testing"

	"gocryptfs/internal/testutil"
)

// allocMeasure picks how to count the allocations of a call on nblocks
// blocks. Sequential calls are counted exactly (testing.AllocsPerRun runs
// with GOMAXPROCS=1) and may not allocate. Parallel ones are counted with
// testutil.MallocsPerRun, which keeps GOMAXPROCS, and bounded by the
// shared job and the start of each extra goroutine (w in total, which is
// what a quiet run measures) plus headroom for scratch pool misses when a
// goroutine lands on a P whose pool cache is empty: the bound depends on
// GOMAXPROCS, never on the number of blocks.
func allocMeasure(nblocks int) (measure func(runs int, fn func()) float64, limit float64) {
	if w := workers(nblocks); w > 1 {
		return testutil.MallocsPerRun, float64(2 * w)
	}
	return testing.AllocsPerRun, 0
}

// skipUnderRace skips an allocation test: allocation counts are
// meaningless under the race detector. (All three AEADs, AES-SIV included,
// are allocation-free per call, so every cipher is measured.)
func skipUnderRace(t *testing.T) {
	t.Helper()
	if testutil.RaceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
}

func TestAllocsSingleBlock(t *testing.T) {
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			skipUnderRace(t)
			h := RandomHeader(ce.cc.Nonces)
			id := h.ID[:]
			plain := pattern(DefaultBS, 3)
			cbuf := make([]byte, 0, ce.CipherBS())
			pbuf := make([]byte, 0, DefaultBS)
			ct := ce.EncryptBlock(nil, plain, 7, id)
			nonce := ct[:ce.NonceSize()]
			hole := make([]byte, ce.CipherBS())
			cases := []struct {
				name string
				fn   func()
			}{
				{"EncryptBlock", func() { ce.EncryptBlock(cbuf, plain, 7, id) }},
				{"EncryptBlockNonce", func() { ce.EncryptBlockNonce(cbuf, plain, 7, id, nonce) }},
				{"DecryptBlock", func() {
					if _, err := ce.DecryptBlock(pbuf, ct, 7, id); err != nil {
						t.Fatal(err)
					}
				}},
				{"DecryptBlock hole", func() { ce.DecryptBlock(pbuf, hole, 7, id) }},
				{"EncryptBlocks 1 block", func() { ce.EncryptBlocks(cbuf, plain, 7, id) }},
				{"DecryptBlocks 1 block", func() { ce.DecryptBlocks(pbuf, ct, 7, id) }},
				{"stack file ID", func() {
					var fid [FileIDLen]byte
					copy(fid[:], id)
					ce.EncryptBlock(cbuf, plain, 7, fid[:])
				}},
				{"pool", func() { ce.PutCBuf(ce.GetCBuf()); ce.PutPBuf(ce.GetPBuf()) }},
			}
			for _, tc := range cases {
				if a := testing.AllocsPerRun(200, tc.fn); a != 0 {
					t.Errorf("%s: %v allocations, want 0", tc.name, a)
				}
			}
		})
	}
}

// Sequential multi-block calls (below the parallel threshold) allocate
// nothing; a parallel 1 MiB call allocates a small constant number of times.
func TestAllocsMultiBlock(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		for _, c := range allCiphers {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			t.Run(c.String(), func(t *testing.T) {
				skipUnderRace(t)
				h := RandomHeader(ce.cc.Nonces)
				id := h.ID[:]
				cbuf, pbuf := ce.GetCBuf(), ce.GetPBuf()
				defer ce.PutCBuf(cbuf)
				defer ce.PutPBuf(pbuf)
				for _, nblocks := range []int{parallelMinBlocks - 1, 256, PoolBlocks} {
					plain := pattern(nblocks*DefaultBS-5, 1)
					ct := ce.EncryptBlocks(nil, plain, 100, id)
					iv := make([]byte, ce.NonceSize())
					iv[0] = 1
					measure, limit := allocMeasure(nblocks)
					for _, tc := range []struct {
						name string
						fn   func()
					}{
						{"EncryptBlocks", func() { ce.EncryptBlocks(*cbuf, plain, 100, id) }},
						{"EncryptBlocksDerived", func() { ce.EncryptBlocksDerived(*cbuf, plain, 100, id, iv) }},
						{"DecryptBlocks", func() {
							if _, err := ce.DecryptBlocks(*pbuf, ct, 100, id); err != nil {
								t.Fatal(err)
							}
						}},
					} {
						a := measure(20, tc.fn)
						if a > limit {
							t.Errorf("GOMAXPROCS=%d %s of %d blocks: %v allocations, want ≤ %v", procs, tc.name, nblocks, a, limit)
						}
						if nblocks == 256 {
							t.Logf("GOMAXPROCS=%d %s of 1 MiB: %v allocations per call", procs, tc.name, a)
						}
					}
				}
			})
		}
		runtime.GOMAXPROCS(old)
	}
}
