//go:build linux

package fusefrontend

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
)

// TestConcurrentFile runs writers on disjoint, block-unaligned regions of
// one file and readers on the same file at once: every region must end up
// with exactly its writer's data (as on ext4), and no read may fail.
func TestConcurrentFile(t *testing.T) {
	tf := mountFS(t, testConfig{})
	p := tf.path("shared")
	const writers, region, rounds = 4, 10000, 20
	mustWrite(t, p, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range writers {
		wg.Go(func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			for r := range rounds {
				data := bytes.Repeat([]byte{byte(w*rounds + r + 1)}, region)
				if _, err := f.WriteAt(data, int64(w*region)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for range 2 {
		rg.Go(func() {
			f, err := os.Open(p)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			buf := make([]byte, writers*region)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := f.ReadAt(buf, 0); err != nil && err.Error() != "EOF" {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := mustRead(t, p)
	if len(got) != writers*region {
		t.Fatalf("size %d", len(got))
	}
	for w := range writers {
		want := bytes.Repeat([]byte{byte(w*rounds + rounds)}, region)
		if !bytes.Equal(got[w*region:(w+1)*region], want) {
			t.Fatalf("region %d has wrong content", w)
		}
	}
}

// TestConcurrentDir creates, renames and removes entries of one directory
// from many goroutines at once, including long names and subdirectories.
func TestConcurrentDir(t *testing.T) {
	tf := mountFS(t, testConfig{})
	d := tf.path("busy")
	os.Mkdir(d, 0o755)
	const workers, per = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				long := fmt.Sprintf("%s-%d-%d", longName, w, i)
				short := fmt.Sprintf("s-%d-%d", w, i)
				if i%3 == 0 {
					if err := os.Mkdir(d+"/"+long, 0o755); err != nil {
						errs <- err
						return
					}
					if err := os.WriteFile(d+"/"+long+"/x", []byte(short), 0o644); err != nil {
						errs <- err
						return
					}
				} else if err := os.WriteFile(d+"/"+long, []byte(short), 0o644); err != nil {
					errs <- err
					return
				}
				if err := os.Rename(d+"/"+long, d+"/"+short); err != nil {
					errs <- err
					return
				}
				if i%2 == 1 {
					if err := os.RemoveAll(d + "/" + short); err != nil {
						errs <- err
						return
					}
				}
				if _, err := os.ReadDir(d); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var want []string
	for w := range workers {
		for i := range per {
			if i%2 == 0 {
				want = append(want, fmt.Sprintf("s-%d-%d", w, i))
			}
		}
	}
	slices.Sort(want)
	if got := listNames(t, d); !slices.Equal(got, want) {
		t.Fatalf("listing %v\nwant %v", got, want)
	}
	// No companion file or rmdir leftover may remain in CIPHERDIR.
	cd, _ := tf.rn.EncryptPath("busy")
	if n := len(tf.cipherEntries(t, cd)); n != len(want)+1 {
		t.Fatalf("%d backing entries, want %d", n, len(want)+1)
	}
}
