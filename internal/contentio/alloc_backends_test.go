package contentio

import (
	"runtime"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/stupidgcm"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// TestAllocsBackends checks the whole hot path, file I/O plus block
// cryptography, with every backend: a 1 MiB WriteAt or ReadAt in steady
// state allocates a small constant number of objects, independent of the
// 256 blocks it touches: with one CPU at most one (a pool refill after a
// garbage collection); with several, contentenc's worker goroutines add a
// few per worker (see contentenc's TestAllocsMultiBlock).
func TestAllocsBackends(t *testing.T) {
	if testing.Short() || testutil.RaceEnabled {
		t.Skip("measures allocations of 1 MiB operations (not meaningful under -race)")
	}
	type backend struct {
		cipher  cryptocore.ContentCipher
		backend cryptocore.Backend
	}
	backends := []backend{
		{cryptocore.AESGCM, cryptocore.BackendGo},
		{cryptocore.XChaCha20Poly1305, cryptocore.BackendGo},
		{cryptocore.AESSIV, cryptocore.BackendGo},
		{cryptocore.AESGCM, cryptocore.BackendOpenSSL},
		{cryptocore.XChaCha20Poly1305, cryptocore.BackendOpenSSL},
	}
	for _, be := range backends {
		t.Run(be.cipher.String()+"/"+be.backend.String(), func(t *testing.T) {
			if be.backend == cryptocore.BackendOpenSSL && !stupidgcm.Available {
				t.Skip("built without OpenSSL")
			}
			ce := coretest.New(t, coretest.Options{Cipher: be.cipher, Backend: be.backend, HKDF: true}).CE
			f, _ := newFile(t, ce, Options{})
			data := make([]byte, mib)
			for i := range data {
				data[i] = byte(i / 7)
			}
			if _, err := f.WriteAt(data, 0); err != nil { // the file and its header exist from here on
				t.Fatal(err)
			}
			ops := []struct {
				name string
				fn   func() error
			}{
				{"WriteAt aligned", func() error { _, err := f.WriteAt(data, 0); return err }},
				{"WriteAt unaligned", func() error { _, err := f.WriteAt(data, 100); return err }},
				{"ReadAt aligned", func() error { _, err := f.ReadAt(data, 0); return err }},
				{"ReadAt unaligned", func() error { _, err := f.ReadAt(data, 100); return err }},
			}
			for _, procs := range []int{1, 2, 4} {
				old := runtime.GOMAXPROCS(procs)
				// One for the occasional pool miss after a garbage
				// collection emptied the pools, plus, with several CPUs,
				// the start of contentenc's worker goroutines (the shared
				// job and one per worker, observed: about 1+procs).
				limit := 1.0
				if procs > 1 {
					limit += float64(3 * procs)
				}
				for _, op := range ops {
					for range 3 { // fill the pools of every P
						if err := op.fn(); err != nil {
							t.Fatal(err)
						}
					}
					var opErr error
					n := testutil.MallocsPerRun(20, func() {
						if err := op.fn(); err != nil {
							opErr = err
						}
					})
					if opErr != nil {
						t.Fatal(opErr)
					}
					if n > limit {
						t.Errorf("GOMAXPROCS=%d %s of 1 MiB: %.1f allocations per call, want ≤ %.0f", procs, op.name, n, limit)
					} else {
						t.Logf("GOMAXPROCS=%d %s of 1 MiB: %.1f allocations per call", procs, op.name, n)
					}
				}
				runtime.GOMAXPROCS(old)
			}
		})
	}
}
