package speed

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/benchutil"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/stupidgcm"
)

func TestRunFormat(t *testing.T) {
	var out bytes.Buffer
	err := run(&out, Options{Header: "gocryptfs test; go-fuse x; 0000-00-00 go linux/amd64"}, 10*time.Millisecond, "Test CPU")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	if lines[0] != "gocryptfs test; go-fuse x; 0000-00-00 go linux/amd64" {
		t.Errorf("header: %q", lines[0])
	}
	if !regexp.MustCompile(`^cpu: Test CPU; (with|no) AES-GCM acceleration$`).MatchString(lines[1]) {
		t.Errorf("cpu line: %q", lines[1])
	}
	lineRE := regexp.MustCompile(`^(.{26})\t( {0,3}\d+\.\d\d MB/s|    N/A)(\t\(selected in auto mode\))?$`)
	selected := map[cryptocore.ContentCipher]int{}
	for i, b := range Backends() {
		l := lines[2+i]
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("bad line %q", l)
			continue
		}
		if strings.TrimRight(m[1], " ") != b.Name {
			t.Errorf("line %d: name %q, want %q", i, m[1], b.Name)
		}
		na := m[2] == "    N/A"
		wantNA := b.Backend == cryptocore.BackendOpenSSL && !stupidgcm.Available
		if na != wantNA {
			t.Errorf("%s: N/A=%v, want %v", b.Name, na, wantNA)
		}
		if m[3] != "" {
			selected[b.Cipher]++
			if !b.Selected() {
				t.Errorf("%s marked but not selected", b.Name)
			}
		}
	}
	if selected[cryptocore.AESGCM] != 1 || selected[cryptocore.XChaCha20Poly1305] != 1 || selected[cryptocore.AESSIV] != 0 {
		t.Errorf("selection markers: %v", selected)
	}
}

func TestFormatLine(t *testing.T) {
	cases := []struct {
		name string
		mbs  float64
		sel  bool
		want string
	}{
		{"AES-GCM-256-Go", 3148.94, true, "AES-GCM-256-Go            \t3148.94 MB/s\t(selected in auto mode)"},
		{"AES-SIV-512-Go", 281.53, false, "AES-SIV-512-Go            \t 281.53 MB/s"},
		{"XChaCha20-Poly1305-OpenSSL", 803.594, false, "XChaCha20-Poly1305-OpenSSL\t 803.59 MB/s"},
		{"AES-GCM-256-OpenSSL", -1, false, "AES-GCM-256-OpenSSL       \t    N/A"},
	}
	for _, c := range cases {
		if got := FormatLine(c.name, c.mbs, c.sel); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestCPUModel(t *testing.T) {
	cases := []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\nmodel name\t: other\n", "AMD EPYC 7763 64-Core Processor"},
		{"processor\t: 0\nmodel\t\t: 1\n", "unknown"},
		{"model name\t:\nmodel name\t: second\n", "second"},
		{"", "unknown"},
	}
	for _, c := range cases {
		if got := parseCPUModel(strings.NewReader(c.in)); got != c.want {
			t.Errorf("parse %q: got %q, want %q", c.in, got, c.want)
		}
	}
	if m := CPUModel(); m == "" {
		t.Error("CPUModel returned empty string")
	}
	line := CPULine("X")
	if cryptocore.HasAESGCMHardware() != strings.HasSuffix(line, "; with AES-GCM acceleration") {
		t.Errorf("CPULine %q disagrees with HasAESGCMHardware", line)
	}
}

// loopOnly hides BatchAEAD, to measure one call per block.
type loopOnly struct{ cipher.AEAD }

// BenchmarkSeal measures every backend on one 4096-byte block and on 1 MiB
// (256 blocks) sealed block by block ("1MiB-loop") and through
// stupidgcm.SealBatch ("1MiB-batch", one cgo call for OpenSSL).
// Compare runs with benchstat.
func BenchmarkSeal(b *testing.B) {
	benchAll(b, true)
}

// BenchmarkOpen is BenchmarkSeal for decryption.
func BenchmarkOpen(b *testing.B) {
	benchAll(b, false)
}

func benchAll(b *testing.B, seal bool) {
	const mib = 1 << 20
	for _, be := range Backends() {
		a, err := be.New()
		if err != nil {
			b.Run(be.Name, func(b *testing.B) { b.Skipf("unavailable: %v", err) })
			continue
		}
		ns := a.NonceSize()
		fid, ad := make([]byte, 16), make([]byte, ADSize)
		rand.Read(fid)
		block := make([]byte, BlockSize)
		big := make([]byte, mib)
		rand.Read(big)
		nonces := make([]byte, mib/BlockSize*ns)
		rand.Read(nonces)
		nonce := nonces[:ns]
		sealedBlock := a.Seal(nil, nonce, block, ad)
		sealedBig := stupidgcm.SealBatch(a, nil, nonces, big, BlockSize, 0, fid)
		out := make([]byte, 0, len(sealedBig))
		run := func(name string, size int, f func()) {
			b.Run(be.Name+"/"+name, func(b *testing.B) { benchutil.LoopCPU(b, size, f) })
		}
		check := func(err error) {
			if err != nil {
				panic(fmt.Sprintf("%s: %v", be.Name, err))
			}
		}
		if seal {
			run("4096", BlockSize, func() { a.Seal(out[:0], nonce, block, ad) })
			run("1MiB-loop", mib, func() { stupidgcm.SealBatch(loopOnly{a}, out[:0], nonces, big, BlockSize, 0, fid) })
			run("1MiB-batch", mib, func() { stupidgcm.SealBatch(a, out[:0], nonces, big, BlockSize, 0, fid) })
		} else {
			run("4096", BlockSize, func() { _, err := a.Open(out[:0], nonce, sealedBlock, ad); check(err) })
			run("1MiB-loop", mib, func() {
				_, err := stupidgcm.OpenBatch(loopOnly{a}, out[:0], sealedBig, BlockSize, 0, fid)
				check(err)
			})
			run("1MiB-batch", mib, func() {
				_, err := stupidgcm.OpenBatch(a, out[:0], sealedBig, BlockSize, 0, fid)
				check(err)
			})
		}
	}
}
