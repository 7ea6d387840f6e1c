package contentio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

const mib = 1 << 20

// benchFileSize bounds the benchmark files so that they stay in the page
// cache and the numbers measure this package, not the disk.
const benchFileSize = 64 * mib

func benchCiphers(b *testing.B, fn func(b *testing.B, c cryptocore.ContentCipher)) {
	for _, c := range allCiphers {
		b.Run(c.String(), func(b *testing.B) { fn(b, c) })
	}
}

// BenchmarkWriteAt1MiB writes 1 MiB requests sequentially, wrapping around
// within a 64 MiB file (so after the first pass they overwrite).
func BenchmarkWriteAt1MiB(b *testing.B) {
	benchCiphers(b, func(b *testing.B, c cryptocore.ContentCipher) {
		f, _ := newFile(b, newCE(b, c), Options{})
		data := make([]byte, mib)
		b.SetBytes(mib)
		b.ReportAllocs()
		var off int64
		for b.Loop() {
			if _, err := f.WriteAt(data, off); err != nil {
				b.Fatal(err)
			}
			off = (off + mib) % benchFileSize
		}
	})
}

// BenchmarkReadAt1MiB reads 1 MiB requests sequentially from a 64 MiB file.
func BenchmarkReadAt1MiB(b *testing.B) {
	benchCiphers(b, func(b *testing.B, c cryptocore.ContentCipher) {
		f, _ := newFile(b, newCE(b, c), Options{})
		data := make([]byte, mib)
		for off := int64(0); off < benchFileSize; off += mib {
			if _, err := f.WriteAt(data, off); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(mib)
		b.ReportAllocs()
		var off int64
		for b.Loop() {
			if n, err := f.ReadAt(data, off); n != mib || (err != nil && err != io.EOF) {
				b.Fatal(n, err)
			}
			off = (off + mib) % benchFileSize
		}
	})
}

// BenchmarkRandomWrite4KiB writes 4 KiB at random offsets of a 64 MiB file,
// block-aligned (no read-modify-write) and unaligned (two partial blocks
// read, merged and rewritten).
func BenchmarkRandomWrite4KiB(b *testing.B) {
	for _, aligned := range []bool{true, false} {
		name := "unaligned"
		if aligned {
			name = "aligned"
		}
		b.Run(name, func(b *testing.B) {
			benchCiphers(b, func(b *testing.B, c cryptocore.ContentCipher) {
				f, _ := newFile(b, newCE(b, c), Options{})
				if err := f.Truncate(context.Background(), benchFileSize); err != nil {
					b.Fatal(err)
				}
				// Fill with data so that the unaligned case decrypts real
				// blocks rather than holes.
				data := make([]byte, mib)
				for off := int64(0); off < benchFileSize; off += mib {
					if _, err := f.WriteAt(data, off); err != nil {
						b.Fatal(err)
					}
				}
				rng := rand.New(rand.NewPCG(1, 2))
				buf := data[:bs]
				b.SetBytes(bs)
				b.ReportAllocs()
				for b.Loop() {
					off := rng.Int64N(benchFileSize - bs)
					if aligned {
						off = off / bs * bs
					}
					if _, err := f.WriteAt(buf, off); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestAllocs checks that 1 MiB reads and writes in steady state allocate at
// most a small constant number of objects (none per block). AllocsPerRun
// runs with GOMAXPROCS=1, so this measures the sequential path; with more
// CPUs contentenc's parallel path adds a constant couple of small objects
// (see the benchmarks' allocs/op). 256 blocks must never cost 256
// allocations.
func TestAllocs(t *testing.T) {
	if testing.Short() || testutil.RaceEnabled {
		t.Skip("measures allocations of 1 MiB operations (not meaningful under -race)")
	}
	const maxAllocs = 8
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			f, _ := newFile(t, newCE(t, c), Options{})
			data := make([]byte, mib)
			tests := []struct {
				name string
				fn   func()
			}{
				{"WriteAt aligned", func() { f.WriteAt(data, 0) }},
				{"WriteAt unaligned", func() { f.WriteAt(data, 100) }},
				{"ReadAt aligned", func() { f.ReadAt(data, 0) }},
				{"ReadAt unaligned", func() { f.ReadAt(data, 100) }},
				{"WriteAt 4KiB unaligned", func() { f.WriteAt(data[:bs], 5000) }},
				{"ReadAt 4KiB unaligned", func() { f.ReadAt(data[:bs], 5000) }},
				// Past the end of file: the size reservation path.
				{"WriteAt extending", func() {
					size, _ := f.Size(context.Background())
					f.WriteAt(data[:128<<10], int64(size))
				}},
			}
			for _, tc := range tests {
				tc.fn() // reach steady state: file exists, pools filled
				if n := testing.AllocsPerRun(20, tc.fn); n > maxAllocs {
					t.Errorf("%s: %.1f allocations per call, want ≤ %d", tc.name, n, maxAllocs)
				} else {
					t.Logf("%s: %.1f allocations per call", tc.name, n)
				}
			}
		})
	}
}

// BenchmarkParallelWriteAt writes 16 MiB of one file with 128 KiB
// requests, split among 1 or 4 goroutines that each own a disjoint region
// (the "4 writers / 1 writer" row of benchmark.bash without FUSE): inside
// an existing file (overwrite) and into an empty one that the writers
// extend (extend). With block-range locks and size reservations the
// writers proceed in parallel; run with -cpu 1,2 to see what the cores
// give.
func BenchmarkParallelWriteAt(b *testing.B) {
	const total, req = 16 * mib, 128 << 10
	for _, extend := range []bool{false, true} {
		for _, writers := range []int{1, 4} {
			name := fmt.Sprintf("%s/writers=%d", map[bool]string{false: "overwrite", true: "extend"}[extend], writers)
			b.Run(name, func(b *testing.B) {
				f, _ := newFile(b, newCE(b, cryptocore.AESGCM), Options{})
				// Overwrite: fill the file first (one extra block),
				// so that the measured writes all stay inside it.
				fill := total + bs
				if extend {
					fill = 1 // only the header and one byte survive
				}
				region := total / writers
				exclusive := 0
				b.SetBytes(total)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if err := f.Truncate(context.Background(), 0); err != nil {
						b.Fatal(err)
					}
					if _, err := f.WriteAt(make([]byte, fill), 0); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					tokens := f.e.ext.tokens
					var wg sync.WaitGroup
					errs := make([]error, writers)
					for g := range writers {
						wg.Go(func() {
							data := make([]byte, req)
							for off := g * region; off < (g+1)*region && errs[g] == nil; off += req {
								_, errs[g] = f.WriteAt(data, int64(off))
							}
						})
					}
					wg.Wait()
					if err := errors.Join(errs...); err != nil {
						b.Fatal(err)
					}
					// Writes that did not run in parallel (took the
					// file exclusively): load-independent, unlike the
					// wall time on a busy machine.
					exclusive += total/req - int(f.e.ext.tokens-tokens)
				}
				b.ReportMetric(float64(exclusive)/float64(b.N), "exclusive-writes/op")
			})
		}
	}
}
