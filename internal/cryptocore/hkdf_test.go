package cryptocore

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/hkdf"
)

// TestSHA256 compares the wipeable SHA-256 with the standard library for
// every message length around the block and padding boundaries, fed in
// one piece and byte by byte.
func TestSHA256(t *testing.T) {
	msg := make([]byte, 200)
	for i := range msg {
		msg[i] = byte(i*7 + 3)
	}
	for l := range len(msg) {
		want := sha256.Sum256(msg[:l])
		var s sha256State
		var got [sha256Size]byte
		s.reset()
		s.write(msg[:l])
		s.sum(&got)
		if got != want {
			t.Fatalf("length %d: %x, want %x", l, got, want)
		}
		s.reset()
		for i := range l {
			s.write(msg[i : i+1])
		}
		s.sum(&got)
		if got != want {
			t.Fatalf("length %d byte by byte: %x, want %x", l, got, want)
		}
	}
}

// TestHKDFMatchesReference checks extract, expand and HMAC against
// x/crypto's HKDF and crypto/hmac for several key and output lengths.
func TestHKDFMatchesReference(t *testing.T) {
	for _, ikmLen := range []int{0, 1, 32, 63, 64, 100} {
		ikm := bytes.Repeat([]byte{byte(ikmLen + 1)}, ikmLen)
		mac := hmac.New(sha256.New, make([]byte, 32))
		mac.Write(ikm)
		wantPRK := mac.Sum(nil)
		p := extract(ikm)
		if !bytes.Equal(p[:], wantPRK) {
			t.Fatalf("extract(%d bytes) = %x, want %x", ikmLen, p[:], wantPRK)
		}
		for _, n := range []int{1, 32, 33, 64, 100} {
			want := make([]byte, n)
			hkdf.New(sha256.New, ikm, nil, []byte(InfoSIV)).Read(want)
			if got := HKDF(ikm, InfoSIV, n); !bytes.Equal(got, want) {
				t.Errorf("HKDF(%d bytes ikm, n=%d) = %x, want %x", ikmLen, n, got, want)
			}
		}
	}
}

// TestNoMasterKeyLeftInMemory derives the ciphers of a random master key,
// wipes the key and then scans the whole writable memory of the process
// (heap, goroutine stacks, everything else anonymous; through
// /proc/self/mem) for a copy of it. The test never holds the key itself
// outside the wiped buffer: it keeps it XOR-masked and compares on the fly.
func TestNoMasterKeyLeftInMemory(t *testing.T) {
	var masked, mask [KeyLen]byte
	rand.Read(masked[:])
	rand.Read(mask[:])
	mk := make([]byte, KeyLen)
	for i := range mk {
		mk[i] = masked[i] ^ mask[i]
	}
	for _, c := range []ContentCipher{AESGCM, AESSIV, XChaCha20Poly1305} {
		cc, err := New(mk, Options{Cipher: c, Backend: BackendGo, HKDF: true})
		if err != nil {
			t.Fatal(err)
		}
		cc.Wipe()
	}
	Wipe(mk)
	n, err := countInMemory(&masked, &mask)
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		t.Errorf("%d copies of the wiped master key found in memory", n)
	}
	// The scan itself must work: with a live copy it finds it.
	for i := range mk {
		mk[i] = masked[i] ^ mask[i]
	}
	n, err = countInMemory(&masked, &mask)
	Wipe(mk)
	if err != nil || n == 0 {
		t.Errorf("scan did not find a live copy of the key (%d, %v)", n, err)
	}
}

// countInMemory counts the occurrences of masked^mask in the writable
// anonymous mappings of the process.
func countInMemory(masked, mask *[KeyLen]byte) (int, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	var prefix [8]byte
	for i := range prefix {
		prefix[i] = masked[i] ^ mask[i]
	}
	defer clear(prefix[:])
	matches := func(b []byte) bool {
		for i := 8; i < KeyLen; i++ {
			if b[i] != masked[i]^mask[i] {
				return false
			}
		}
		return true
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk+KeyLen)
	defer clear(buf)
	count := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[1], "rw") {
			continue
		}
		if len(f) >= 6 && !strings.HasPrefix(f[5], "[heap]") && !strings.HasPrefix(f[5], "[stack") {
			continue // file mappings (data sections of libraries)
		}
		var start, end uint64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &start, &end); err != nil {
			return 0, err
		}
		for off := start; off < end; off += chunk {
			n := min(uint64(len(buf)), end-off)
			got, err := mem.ReadAt(buf[:n], int64(off))
			if err != nil && got == 0 {
				continue // unreadable (guard pages)
			}
			b := buf[:got]
			for i := 0; ; {
				j := bytes.Index(b[i:], prefix[:])
				if j < 0 {
					break
				}
				i += j
				// Matches starting in the overlap are counted by the
				// next chunk.
				if i < chunk && i+KeyLen <= len(b) && matches(b[i:]) {
					count++
				}
				i++
			}
		}
	}
	return count, nil
}
