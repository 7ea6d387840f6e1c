// Package speed implements the -speed action (docs/cli.md 6.3): it measures the
// throughput of every content-cipher backend on this machine and prints one
// line per backend, marking the backend that auto mode would choose.
//
// Throughput is that of sealing 4096-byte blocks with 24 bytes of
// associated data, the shape of a gocryptfs content block, through the same
// constructors the filesystem uses (cryptocore.NewAEAD).
package speed

import (
	"bufio"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"gocryptfs/internal/cryptocore"
)

// BlockSize and ADSize describe what is measured: one content block and
// its associated data BE64(block number) ‖ file ID.
const (
	BlockSize = 4096
	ADSize    = 24
)

// DefaultDuration is how long Run measures each backend.
const DefaultDuration = time.Second

// Options configures Run.
type Options struct {
	// Header, if not empty, is printed as the first line (the -version
	// line of docs/cli.md 6.4, which only package main knows).
	Header string
	// Logger receives per-backend details at debug level; nil discards.
	Logger *slog.Logger
}

// Backend is one measured implementation.
type Backend struct {
	// Name is the label printed in the first column.
	Name string
	// Cipher and Backend select the implementation via cryptocore.NewAEAD.
	Cipher  cryptocore.ContentCipher
	Backend cryptocore.Backend
}

// Backends lists the measured implementations in the order of docs/cli.md 6.3.
func Backends() []Backend {
	return []Backend{
		{"AES-GCM-256-OpenSSL", cryptocore.AESGCM, cryptocore.BackendOpenSSL},
		{"AES-GCM-256-Go", cryptocore.AESGCM, cryptocore.BackendGo},
		{"AES-SIV-512-Go", cryptocore.AESSIV, cryptocore.BackendGo},
		{"XChaCha20-Poly1305-OpenSSL", cryptocore.XChaCha20Poly1305, cryptocore.BackendOpenSSL},
		{"XChaCha20-Poly1305-Go", cryptocore.XChaCha20Poly1305, cryptocore.BackendGo},
	}
}

// New builds the AEAD of b with a random key of the right length.
func (b Backend) New() (cipher.AEAD, error) {
	keyLen := cryptocore.KeyLen
	if b.Cipher == cryptocore.AESSIV {
		keyLen = 64
	}
	key := make([]byte, keyLen)
	rand.Read(key)
	defer cryptocore.Wipe(key)
	a, _, err := cryptocore.NewAEAD(b.Cipher, b.Backend, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name, err)
	}
	return a, nil
}

// Selected reports whether auto mode picks b for its cipher. AES-SIV has a
// single backend and is never marked (as in the reference output).
func (b Backend) Selected() bool {
	if b.Cipher == cryptocore.AESSIV {
		return false
	}
	return cryptocore.AutoBackend(b.Cipher) == b.Backend
}

// Run measures every backend for DefaultDuration and writes the report to
// w: the header (if any), the cpu line (CPUModel), then one line per
// backend. An unavailable backend (e.g. OpenSSL in a without_openssl
// build) shows N/A. Only write errors are returned.
func Run(w io.Writer, opts Options) error {
	return run(w, opts, DefaultDuration, CPUModel())
}

// run is Run measuring for d per backend and showing model on the cpu
// line (tests measure for milliseconds and fix the model).
func run(w io.Writer, opts Options, d time.Duration, model string) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Header != "" {
		if _, err := fmt.Fprintln(w, opts.Header); err != nil {
			return fmt.Errorf("speed: %w", err)
		}
	}
	if _, err := fmt.Fprintln(w, CPULine(model)); err != nil {
		return fmt.Errorf("speed: %w", err)
	}
	for _, b := range Backends() {
		mbs := -1.0
		a, err := b.New()
		if err != nil {
			log.Debug("speed: backend unavailable", "backend", b.Name, "err", err)
		} else {
			mbs = Measure(a, d)
			if wp, ok := a.(interface{ Wipe() }); ok {
				wp.Wipe()
			}
			log.Debug("speed: measured", "backend", b.Name, "MB/s", mbs)
		}
		if _, err := io.WriteString(w, FormatLine(b.Name, mbs, b.Selected())+"\n"); err != nil {
			return fmt.Errorf("speed: %w", err)
		}
	}
	return nil
}

// FormatLine renders one result line without the newline: the name padded
// to 26 columns, a TAB, the speed as "%7.2f MB/s" (or "    N/A" when mbs is
// negative), and "\t(selected in auto mode)" if selected.
func FormatLine(name string, mbs float64, selected bool) string {
	var s string
	if mbs < 0 {
		s = fmt.Sprintf("%-26s\t    N/A", name)
	} else {
		s = fmt.Sprintf("%-26s\t%7.2f MB/s", name, mbs)
	}
	if selected {
		s += "\t(selected in auto mode)"
	}
	return s
}

// Measure seals BlockSize-byte blocks with ADSize bytes of associated data
// for about d and returns the throughput in MB/s (10^6 bytes per second,
// as Go's benchmarks count). One untimed call warms up the backend.
func Measure(a cipher.AEAD, d time.Duration) float64 {
	nonce := make([]byte, a.NonceSize())
	ad := make([]byte, ADSize)
	pt := make([]byte, BlockSize)
	rand.Read(nonce)
	rand.Read(pt)
	buf := make([]byte, 0, BlockSize+a.Overhead())
	a.Seal(buf, nonce, pt, ad)
	// Look at the clock every few blocks only: a Seal takes about a
	// microsecond, time.Since a noticeable fraction of that.
	const chunk = 16
	n := 0
	start := time.Now()
	var el time.Duration
	for el < d {
		for range chunk {
			a.Seal(buf, nonce, pt, ad)
		}
		n += chunk
		el = time.Since(start)
	}
	return float64(n) * BlockSize / el.Seconds() / 1e6
}

// CPULine renders the "cpu:" line of docs/cli.md 6.3 for model, with or without
// AES-GCM acceleration as cryptocore.HasAESGCMHardware reports.
func CPULine(model string) string {
	accel := "no AES-GCM acceleration"
	if cryptocore.HasAESGCMHardware() {
		accel = "with AES-GCM acceleration"
	}
	return fmt.Sprintf("cpu: %s; %s", model, accel)
}

// CPUModel returns the "model name" of the first CPU in /proc/cpuinfo, or
// "unknown" if it cannot be determined.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	return parseCPUModel(f)
}

// parseCPUModel extracts the first non-empty "model name" value from
// cpuinfo text, or "unknown".
func parseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			if v := strings.TrimSpace(val); v != "" {
				return v
			}
		}
	}
	return "unknown"
}
