package contentenc

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"gocryptfs/internal/benchutil"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// BenchmarkBackends compares, for 1 MiB EncryptBlocks and DecryptBlocks
// calls (the FUSE request size), the Go AEADs with OpenSSL one cgo call per
// block ("OpenSSL-block", the batch interface hidden) and OpenSSL one batch
// call per worker ("OpenSSL-batch"). It is the evidence for
// cryptocore.AutoBackend.
//
// Besides wall-clock MB/s it reports cpuMB/s, bytes per CPU second of the
// whole process: the calls spread over GOMAXPROCS goroutines, and on a
// shared, loaded machine the CPU time is the figure that holds still.
// procs=1 gives the cost per core, procs=2 the parallel path. Run with
// -count 6 for benchstat, e.g.
//
//	go test -run XXX -bench Backends -count 6 ./internal/contentenc/ > new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl new.txt
func BenchmarkBackends(b *testing.B) {
	const size = 1 << 20
	for _, c := range batchCiphers {
		goCE := newCE(b, c, testutil.MasterKeyHex, true)
		impls := []struct {
			name string
			ce   *ContentEnc
		}{{"Go", goCE}}
		if tr, ok := makeTrio(b, c); ok {
			impls = append(impls, struct {
				name string
				ce   *ContentEnc
			}{"OpenSSL-block", tr.perBlock}, struct {
				name string
				ce   *ContentEnc
			}{"OpenSSL-batch", tr.batch})
		}
		id := RandomHeader(nil).ID
		plain := pattern(size, 1)
		for _, op := range []string{"Encrypt", "Decrypt"} {
			for _, procs := range []int{1, 2} {
				for _, im := range impls {
					ce := im.ce
					name := fmt.Sprintf("op=%s/cipher=%s/procs=%d/impl=%s", op, cipherTag(c), procs, im.name)
					b.Run(name, func(b *testing.B) {
						// Set here rather than with -cpu, whose setting does
						// not reliably reach sub-benchmarks run with b.Loop.
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
						if op == "Encrypt" {
							cbuf := ce.GetCBuf()
							defer ce.PutCBuf(cbuf)
							benchutil.LoopProcessCPU(b, size, func() { ce.EncryptBlocks(*cbuf, plain, 0, id[:]) })
							return
						}
						ct := ce.EncryptBlocks(nil, plain, 0, id[:])
						pbuf := ce.GetPBuf()
						defer ce.PutPBuf(pbuf)
						benchutil.LoopProcessCPU(b, size, func() {
							if _, err := ce.DecryptBlocks(*pbuf, ct, 0, id[:]); err != nil {
								b.Fatal(err)
							}
						})
					})
				}
			}
		}
	}
}

// cipherTag is a short benchmark-name form of c.
func cipherTag(c cryptocore.ContentCipher) string {
	if c == cryptocore.XChaCha20Poly1305 {
		return "XChaCha"
	}
	return "AESGCM"
}

// BenchmarkBackendsPaired measures the same 1 MiB calls as
// BenchmarkBackends, but interleaved: every iteration runs each
// implementation once, in rotating order, and charges each with the CPU
// time it used (procs=1: sequential on one locked thread, thread CPU time;
// procs=2: the parallel path, process CPU time). Load on a shared machine
// drifts over seconds, so each implementation sees the same load and the
// ratios ("batch/Go" etc.) are far steadier than separate runs. It reports
// cpuMB/s per implementation (e.g. "Go-cpuMB/s"); ns/op and MB/s cover all
// implementations together and mean little.
func BenchmarkBackendsPaired(b *testing.B) {
	const size = 1 << 20
	for _, c := range batchCiphers {
		tr, ok := makeTrio(b, c)
		if !ok {
			b.Skip("built without OpenSSL")
		}
		names := []string{"Go", "OpenSSL-block", "OpenSSL-batch"}
		ces := []*ContentEnc{tr.goCE, tr.perBlock, tr.batch}
		id := RandomHeader(nil).ID
		plain := pattern(size, 1)
		ct := tr.goCE.EncryptBlocks(nil, plain, 0, id[:])
		buf := make([]byte, 0, len(ct))
		for _, op := range []string{"Encrypt", "Decrypt"} {
			for _, procs := range []int{1, 2} {
				b.Run(fmt.Sprintf("op=%s/cipher=%s/procs=%d", op, cipherTag(c), procs), func(b *testing.B) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					clock := benchutil.ThreadCPU
					if procs > 1 {
						clock = benchutil.ProcessCPU
					}
					calls := make([]func(), len(ces))
					for k, ce := range ces {
						if op == "Encrypt" {
							calls[k] = func() { ce.EncryptBlocks(buf, plain, 0, id[:]) }
						} else {
							calls[k] = func() {
								if _, err := ce.DecryptBlocks(buf, ct, 0, id[:]); err != nil {
									b.Fatal(err)
								}
							}
						}
					}
					cpu := make([]time.Duration, len(ces))
					b.SetBytes(int64(size * len(ces)))
					b.ReportAllocs()
					it := 0
					for b.Loop() {
						for r := range ces {
							k := (it + r) % len(ces)
							c0 := clock()
							calls[k]()
							cpu[k] += clock() - c0
						}
						it++
					}
					rate := func(k int) float64 { return float64(size) * float64(b.N) / cpu[k].Seconds() / 1e6 }
					for k, name := range names {
						if cpu[k] > 0 {
							b.ReportMetric(rate(k), name+"-cpuMB/s")
						}
					}
					if cpu[0] > 0 && cpu[1] > 0 && cpu[2] > 0 {
						b.ReportMetric(rate(2)/rate(0), "batch/Go")
						b.ReportMetric(rate(1)/rate(0), "block/Go")
						b.ReportMetric(rate(2)/rate(1), "batch/block")
					}
				})
			}
		}
	}
}
