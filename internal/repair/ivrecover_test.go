package repair

import (
	"bytes"
	"fmt"
	"testing"

	"gocryptfs/internal/testutil/coretest"
)

// TestFlippedIVPaddingOnly: under an IV with one bit flipped, about one
// encrypted name in 300 still has valid padding (only its UTF-8 check
// fails). Such a name must not make the search conclude that the damaged
// IV is right: it used to, which skipped the recovery for most
// directories of a few hundred entries.
func TestFlippedIVPaddingOnly(t *testing.T) {
	core := coretest.New(t, coretest.Options{HKDF: true})
	r := &repairer{nt: core.NT}
	iv := bytes.Repeat([]byte{0x5a}, 16)
	flipped := bytes.Clone(iv)
	flipped[3] ^= 0x10
	var entries []string
	lucky := false
	for i := 0; i < 20000 && (!lucky || len(entries) < 8); i++ {
		enc, err := core.NT.EncryptName(fmt.Sprintf("file-%d.txt", i), iv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = core.NT.DecryptName(enc, flipped)
		switch {
		case err == nil && !lucky:
			lucky = true
			entries = append([]string{enc}, entries...) // checked first
		case err != nil && len(entries) < 8:
			entries = append(entries, enc)
		}
	}
	if !lucky {
		t.Fatal("no name with valid padding under the flipped IV among 20000")
	}
	got, note := r.flippedIV(-1, flipped, entries)
	if !bytes.Equal(got, iv) {
		t.Fatalf("flippedIV = %x (%q), want the original %x", got, note, iv)
	}
}
