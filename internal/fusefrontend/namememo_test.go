package fusefrontend

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

// TestNameMemo: encryptName through the memo returns exactly what the
// name transform computes, for short and hashed long names, the same name
// under different IVs and far more names than the memo holds (slots are
// overwritten, never confused), also with concurrent callers. Names that a
// listing remembers are the backing names themselves; long ones are not
// remembered.
func TestNameMemo(t *testing.T) {
	cc, err := cryptocore.New(make([]byte, 32), cryptocore.Options{HKDF: true})
	if err != nil {
		t.Fatal(err)
	}
	ce, _ := contentenc.New(cc, contentenc.Options{})
	nt, err := nametransform.New(cc, nametransform.Options{Raw64: true})
	if err != nil {
		t.Fatal(err)
	}
	rn, err := NewRootNode(Args{CipherDir: t.TempDir()}, nt, ce)
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	ivs := [][]byte{bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16)}
	names := make([]string, 0, 2*memoSlots)
	for i := range cap(names) {
		names = append(names, "f"+strconv.Itoa(i))
	}
	names = append(names, strings.Repeat("L", 200), strings.Repeat("M", 255))
	check := func(name string, iv []byte) {
		enc, err := nt.EncryptName(name, iv)
		if err != nil {
			t.Error(err)
			return
		}
		want, long := nt.HashIfLong(enc)
		wantLong := ""
		if long {
			wantLong = enc
		}
		for range 2 { // computed, then (usually) from the memo
			c, l, err := rn.encryptName(name, iv)
			if err != nil || c != want || l != wantLong {
				t.Errorf("%.20q: %q %q %v, want %q %q", name, c, l, err, want, wantLong)
			}
		}
	}
	var wg sync.WaitGroup
	for _, iv := range ivs {
		wg.Go(func() {
			for _, n := range names {
				check(n, iv)
			}
		})
	}
	wg.Wait()
	hits := 0
	for _, n := range names[len(names)-100:] {
		if _, _, ok := rn.names.get(ivs[1], n); ok {
			hits++
		}
	}
	if hits == 0 {
		t.Error("the memo remembered none of the last names")
	}
	// A listed long (hashed) name is not remembered under its hash.
	long := names[len(names)-1]
	hashed, _ := nt.EncryptAndHashName(long, ivs[0])
	rn.rememberListed(ivs[0], "other", hashed)
	if _, _, ok := rn.names.get(ivs[0], "other"); ok {
		t.Error("a hashed long name was remembered from a listing")
	}
	short := "short"
	cShort, _ := nt.EncryptAndHashName(short, ivs[0])
	rn.rememberListed(ivs[0], short, cShort)
	if c, _, ok := rn.names.get(ivs[0], short); !ok || c != cShort {
		t.Errorf("listed name: %q %v, want %q", c, ok, cShort)
	}
	for i := range 3 * xattrMemoSlots {
		attr := "user.a" + strconv.Itoa(i%(2*xattrMemoSlots))
		want, err := nt.EncryptXattrName(attr)
		if got, err2 := rn.encryptXattrName(attr); err != nil || err2 != nil || got != want {
			t.Errorf("xattr %q: %q %v, want %q %v", attr, got, err2, want, err)
		}
	}
	if _, _, err := rn.encryptName("a/b", ivs[0]); err == nil {
		t.Error("invalid name accepted")
	}
}
