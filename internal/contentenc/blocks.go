package contentenc

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"gocryptfs/internal/cryptocore"
)

const (
	// maxWorkers caps the goroutines of one call: a 1 MiB request has at
	// most 257/minBlocksPerWorker = 32 shares anyway.
	maxWorkers = 32
	// parallelMinBlocks is the smallest number of blocks that is spread over
	// several goroutines; below it, starting goroutines costs more than
	// it saves (one 4 KiB block takes 1-10 µs).
	parallelMinBlocks = 16
	// minBlocksPerWorker keeps each goroutine's share large enough to be
	// worth its start-up.
	minBlocksPerWorker = 8
)

// workers returns how many goroutines should process n blocks (1 means do
// it on the calling goroutine).
func workers(n int) int {
	if n < parallelMinBlocks {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/minBlocksPerWorker, maxWorkers))
}

// parallelJob is the shared state of one parallel multi-block call. It is
// allocated once per call and holds everything the goroutines need,
// including copies of the file ID and IV (so that the caller's may live on
// its stack); each extra goroutine then costs one more allocation, for its
// start.
type parallelJob struct {
	ce      *ContentEnc
	wg      sync.WaitGroup
	out, in []byte
	first   uint64
	fileID  []byte
	iv      []byte // nil: random nonces
	decrypt bool   // DecryptBlocks rather than EncryptBlocks
	ids     [FileIDLen + 24]byte
	results [maxWorkers]struct {
		bad int
		err error
	}
}

func (ce *ContentEnc) newJob(out, in []byte, first uint64, fileID, iv []byte) *parallelJob {
	j := &parallelJob{ce: ce, out: out, in: in, first: first}
	j.fileID = append(j.ids[:0:FileIDLen], fileID...)
	if iv != nil {
		j.iv = append(j.ids[FileIDLen:FileIDLen:len(j.ids)], iv...)
	}
	return j
}

// spread processes n blocks in w contiguous shares, the last one on the
// calling goroutine, and waits for all of them.
func (j *parallelJob) spread(n, w int) {
	lo := 0
	for k := range w - 1 {
		hi := n * (k + 1) / w
		j.wg.Add(1)
		go j.runShare(k, lo, hi)
		lo = hi
	}
	j.share(w-1, lo, n)
	j.wg.Wait()
}

func (j *parallelJob) runShare(k, lo, hi int) {
	defer j.wg.Done()
	j.share(k, lo, hi)
}

// share processes blocks [lo, hi) as share number k.
func (j *parallelJob) share(k, lo, hi int) {
	if j.decrypt {
		j.results[k].bad, j.results[k].err = j.ce.decryptRange(j.out, j.in, lo, hi, j.first, j.fileID)
		return
	}
	j.ce.encryptRange(j.out, j.in, lo, hi, j.first, j.fileID, j.iv)
}

// CipherLen returns the length of the ciphertext blocks (without header)
// for plainLen bytes of plaintext starting at a block boundary: what
// EncryptBlocks appends.
func (ce *ContentEnc) CipherLen(plainLen int) int {
	n := plainLen / DefaultBS * ce.cipherBS
	if r := plainLen % DefaultBS; r > 0 {
		n += r + ce.overhead
	}
	return n
}

// PlainLen returns how many plaintext bytes DecryptBlocks appends for
// cipherLen bytes of ciphertext blocks if they all decrypt (a last block
// too short to hold anything counts as 0).
func (ce *ContentEnc) PlainLen(cipherLen int) int {
	n := cipherLen / ce.cipherBS * DefaultBS
	if r := cipherLen % ce.cipherBS; r > ce.overhead {
		n += r - ce.overhead
	}
	return n
}

// EncryptBlocks encrypts plain, which starts at the beginning of block
// firstBlockNo, as consecutive blocks of DefaultBS bytes (the last one may
// be shorter) with fresh random nonces, and appends the ciphertext blocks
// (CipherLen(len(plain)) bytes) to dst. plain must not overlap dst's spare
// capacity. Large inputs are sealed by several goroutines in parallel;
// with an AEAD that implements cryptocore.BatchAEAD (the OpenSSL backends)
// each goroutine seals its share in one batch call. It allocates only if
// dst lacks capacity, plus a constant few small objects when it goes
// parallel.
func (ce *ContentEnc) EncryptBlocks(dst, plain []byte, firstBlockNo uint64, fileID []byte) []byte {
	return ce.encryptBlocks(dst, plain, firstBlockNo, fileID, nil)
}

// EncryptBlocksDerived is EncryptBlocks with reverse-mode nonces: block b
// gets the nonce block0IV + b (docs/format.md 9.1), so the output is
// deterministic. block0IV must be NonceSize() bytes.
func (ce *ContentEnc) EncryptBlocksDerived(dst, plain []byte, firstBlockNo uint64, fileID, block0IV []byte) ([]byte, error) {
	if len(block0IV) != ce.nonceLen {
		return dst, fmt.Errorf("contentenc: block-0 IV of %d bytes, want %d: %w", len(block0IV), ce.nonceLen, ErrBadNonce)
	}
	return ce.encryptBlocks(dst, plain, firstBlockNo, fileID, block0IV), nil
}

// encryptBlocks implements both EncryptBlocks (block0IV == nil: random
// nonces) and EncryptBlocksDerived.
func (ce *ContentEnc) encryptBlocks(dst, plain []byte, firstBlockNo uint64, fileID, block0IV []byte) []byte {
	if len(plain) == 0 {
		return dst
	}
	total := ce.CipherLen(len(plain))
	dst = slices.Grow(dst, total)
	base := len(dst)
	out := dst[:base+total]
	n := (len(plain) + DefaultBS - 1) / DefaultBS

	w := workers(n)
	if w == 1 {
		ce.encryptRange(out[base:], plain, 0, n, firstBlockNo, fileID, block0IV)
		return out
	}
	j := ce.newJob(out[base:], plain, firstBlockNo, fileID, block0IV)
	j.spread(n, w)
	return out
}

// encryptRange seals blocks [lo, hi) of plain into out, which holds the
// ciphertext of all of plain: block i goes to out[i*cipherBS:]. Each
// block's slice is capped at its exact end, so concurrent calls on disjoint
// ranges never touch each other's bytes.
func (ce *ContentEnc) encryptRange(out, plain []byte, lo, hi int, firstBlockNo uint64, fileID, block0IV []byte) {
	if b, ok := ce.aead.(cryptocore.BatchAEAD); ok {
		ce.encryptRangeBatch(b, out, plain, lo, hi, firstBlockNo, fileID, block0IV)
		return
	}
	s := ce.getScratch()
	for i := lo; i < hi; i++ {
		p := plain[i*DefaultBS : min((i+1)*DefaultBS, len(plain))]
		off := i * ce.cipherBS
		blk := out[off : off+ce.nonceLen : off+ce.overhead+len(p)]
		b := firstBlockNo + uint64(i)
		if block0IV == nil {
			ce.cc.Nonces.Fill(blk)
		} else {
			deriveNonce(blk, block0IV, b)
		}
		ce.seal(blk, p, b, fileID, s)
	}
	ce.putScratch(s)
}

// DecryptBlocks decrypts consecutive ciphertext blocks (CipherBS() bytes
// each, the last one may be shorter) of which the first is block
// firstBlockNo, and appends the plaintext to dst. Holes decrypt to zeros
// (see DecryptBlock). ciphertext must not overlap dst's spare capacity.
// Large inputs are opened by several goroutines in parallel; with a
// cryptocore.BatchAEAD each goroutine opens its share in one batch call per
// run of blocks between holes.
//
// On error (wrapping ErrCorruptBlock, for the lowest-numbered bad block)
// the result holds dst plus the plaintext of the blocks before the bad one,
// which authenticated; nothing beyond is left readable in dst's spare
// capacity. It allocates only if dst lacks capacity (PlainLen of the
// ciphertext length), plus a constant few small objects when it goes
// parallel.
func (ce *ContentEnc) DecryptBlocks(dst, ciphertext []byte, firstBlockNo uint64, fileID []byte) ([]byte, error) {
	if len(ciphertext) == 0 {
		return dst, nil
	}
	total := ce.PlainLen(len(ciphertext))
	dst = slices.Grow(dst, total)
	base := len(dst)
	out := dst[:base+total]
	n := (len(ciphertext) + ce.cipherBS - 1) / ce.cipherBS

	bad, err := n, error(nil)
	w := workers(n)
	if w == 1 {
		bad, err = ce.decryptRange(out[base:], ciphertext, 0, n, firstBlockNo, fileID)
	} else {
		j := ce.newJob(out[base:], ciphertext, firstBlockNo, fileID, nil)
		j.decrypt = true
		j.spread(n, w)
		// Shares are in ascending block order, so the first failing share
		// holds the lowest bad block.
		for _, r := range j.results[:w] {
			if r.err != nil {
				bad, err = r.bad, r.err
				break
			}
		}
	}
	if err != nil {
		good := base + bad*DefaultBS
		// Later shares may have decrypted (authentic) blocks past the bad
		// one; do not leave them lying around in the caller's buffer.
		clear(out[good:])
		return out[:good], err
	}
	return out, nil
}

// decryptRange opens blocks [lo, hi) of ciphertext into out, which has room
// for the plaintext of all of ciphertext: block i goes to
// out[i*DefaultBS:], capped at its exact plaintext length. It returns hi
// and nil, or the index of the first bad block and its error.
func (ce *ContentEnc) decryptRange(out, ciphertext []byte, lo, hi int, firstBlockNo uint64, fileID []byte) (int, error) {
	s := ce.getScratch()
	defer ce.putScratch(s)
	if b, ok := ce.aead.(cryptocore.BatchAEAD); ok {
		return ce.decryptRangeBatch(b, out, ciphertext, lo, hi, firstBlockNo, fileID, s)
	}
	for i := lo; i < hi; i++ {
		if err := ce.decryptOne(out, ciphertext, i, firstBlockNo, fileID, s); err != nil {
			return i, err
		}
	}
	return hi, nil
}

// decryptOne opens block i of ciphertext into out (see decryptRange).
func (ce *ContentEnc) decryptOne(out, ciphertext []byte, i int, firstBlockNo uint64, fileID []byte, s *scratch) error {
	c := ciphertext[i*ce.cipherBS : min((i+1)*ce.cipherBS, len(ciphertext))]
	off := i * DefaultBS
	plen := DefaultBS
	if len(c) < ce.cipherBS {
		plen = max(0, len(c)-ce.overhead)
	}
	b := firstBlockNo + uint64(i)
	p, err := ce.open(out[off:off:off+plen], c, b, fileID, s)
	if err != nil {
		return err
	}
	if len(p) != plen || (plen > 0 && &p[0] != &out[off]) {
		// Only an AEAD that breaks the cipher.AEAD contract gets here.
		return corrupt(b, "AEAD returned %d bytes, want %d in place", len(p), plen)
	}
	return nil
}

// The batch paths below serve AEADs that implement cryptocore.BatchAEAD (the
// OpenSSL backends), where every Seal or Open is a cgo call: each share of
// a multi-block call then costs one cgo call instead of one per block. The
// Go AEADs gain nothing from batching and keep the per-block loops above.

// batchBlocks is the most blocks one batch call seals; it bounds the nonce
// buffer. A 1 MiB request (PoolBlocks blocks, unaligned) is one call even
// on a single worker; larger inputs take several.
const batchBlocks = PoolBlocks

// maxNonceLen is the longest nonce of any content cipher (XChaCha20's).
const maxNonceLen = 24

// batchScratch is per-goroutine working memory of the batch paths.
type batchScratch struct {
	// nonces holds the nonces of one SealBatch call: they must be gathered
	// in a separate buffer, because SealBatch refuses nonces that overlap
	// its output.
	nonces [batchBlocks * maxNonceLen]byte
	// fileID is a copy of the caller's file ID. Passed to an interface
	// method, the caller's slice would escape, and a file ID kept on the
	// caller's stack would cost an allocation per call.
	fileID [FileIDLen]byte
}

func (ce *ContentEnc) getBatchScratch() *batchScratch {
	if bs, ok := ce.batchScratch.Get().(*batchScratch); ok {
		return bs
	}
	return new(batchScratch)
}

// encryptRangeBatch is encryptRange with one SealBatch call per batchBlocks
// blocks. The nonces are drawn (or derived) exactly as in the per-block
// loop, so the output has the same form; each block still gets its own
// NonceSource.Fill, which guarantees a nonce that is not all zero.
func (ce *ContentEnc) encryptRangeBatch(b cryptocore.BatchAEAD, out, plain []byte, lo, hi int, firstBlockNo uint64, fileID, block0IV []byte) {
	bs := ce.getBatchScratch()
	defer ce.batchScratch.Put(bs)
	// Longer file IDs, which the format never has, get a fresh copy.
	fid := append(bs.fileID[:0], fileID...)
	nl := ce.nonceLen
	for i := lo; i < hi; {
		j := min(hi, i+batchBlocks)
		nonces := bs.nonces[:(j-i)*nl]
		for k := range j - i {
			nk := nonces[k*nl : (k+1)*nl]
			if block0IV == nil {
				ce.cc.Nonces.Fill(nk)
			} else {
				deriveNonce(nk, block0IV, firstBlockNo+uint64(i+k))
			}
		}
		p := plain[i*DefaultBS : min(j*DefaultBS, len(plain))]
		off := i * ce.cipherBS
		// Capped at the exact end: concurrent shares never touch each
		// other's bytes, and SealBatch cannot reallocate.
		b.SealBatch(out[off:off:off+ce.CipherLen(len(p))], nonces, p, DefaultBS, firstBlockNo+uint64(i), fid)
		i = j
	}
}

// batchable reports whether block i of ciphertext can go to OpenBatch: its
// nonce is not all zero (which marks a hole or a corrupt block, judged by
// decryptOne) and it is long enough for nonce and tag (only the last block
// of ciphertext may be shorter than CipherBS). For blocks that are, the two
// paths produce the same plaintext and the same errors.
func (ce *ContentEnc) batchable(ciphertext []byte, i int) bool {
	c := ciphertext[i*ce.cipherBS : min((i+1)*ce.cipherBS, len(ciphertext))]
	return len(c) >= ce.overhead && !allZero(c[:ce.nonceLen])
}

// decryptRangeBatch is decryptRange with one OpenBatch call per run of
// batchable blocks; holes and malformed blocks between the runs go through
// decryptOne. The scan costs one look at each nonce.
func (ce *ContentEnc) decryptRangeBatch(b cryptocore.BatchAEAD, out, ciphertext []byte, lo, hi int, firstBlockNo uint64, fileID []byte, s *scratch) (int, error) {
	bs := ce.getBatchScratch()
	defer ce.batchScratch.Put(bs)
	fid := append(bs.fileID[:0], fileID...) // see batchScratch
	for i := lo; i < hi; {
		j := i
		for j < hi && ce.batchable(ciphertext, j) {
			j++
		}
		if j > i {
			c := ciphertext[i*ce.cipherBS : min(j*ce.cipherBS, len(ciphertext))]
			off := i * DefaultBS
			plen := ce.PlainLen(len(c))
			p, err := b.OpenBatch(out[off:off:off+plen], c, DefaultBS, firstBlockNo+uint64(i), fid)
			if err != nil {
				bad := i
				var be cryptocore.BatchError
				if errors.As(err, &be) {
					bad += be.BatchIndex()
					err = be.Unwrap()
				}
				return bad, &CorruptBlockError{BlockNo: firstBlockNo + uint64(bad), Err: err}
			}
			if len(p) != plen || (plen > 0 && &p[0] != &out[off]) {
				// Only an AEAD that breaks the BatchAEAD contract gets here.
				return i, corrupt(firstBlockNo+uint64(i), "batch AEAD returned %d bytes, want %d in place", len(p), plen)
			}
		}
		if j < hi {
			if err := ce.decryptOne(out, ciphertext, j, firstBlockNo, fileID, s); err != nil {
				return j, err
			}
			j++
		}
		i = j
	}
	return hi, nil
}
