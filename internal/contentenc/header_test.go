package contentenc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

func TestParseHeader(t *testing.T) {
	id := "95e7ef1ef9d7205ba8409fa6f9e4ba46"
	cases := []struct {
		name    string
		hex     string
		wantErr string // prefix of the error message; "" = valid
	}{
		{"valid TV-7", "0002" + id, ""},
		{"valid ID with zeros", "0002" + "00000000000000000000000000000001", ""},
		{"empty", "", "ParseHeader: invalid length, want=18 have=0"},
		{"17 bytes", "0002" + id[:30], "ParseHeader: invalid length, want=18 have=17"},
		{"19 bytes", "0002" + id + "00", "ParseHeader: invalid length, want=18 have=19"},
		{"header plus block", "0002" + id + strings.Repeat("ab", 33), "ParseHeader: invalid length, want=18 have=51"},
		{"all zero", strings.Repeat("00", 18), "ParseHeader: header is all-zero. Header hexdump: " + strings.Repeat("00", 18)},
		{"version 0", "0000" + id, "ParseHeader: invalid version, want=2 have=0. Header hexdump: 0000" + id},
		{"version 1", "0001" + id, "ParseHeader: invalid version, want=2 have=1. Header hexdump: 0001" + id},
		{"version 3 (TV-15)", "0003" + id, "ParseHeader: invalid version, want=2 have=3. Header hexdump: 0003" + id},
		{"version 0x0200 (little endian 2)", "0200" + id, "ParseHeader: invalid version, want=2 have=512."},
		{"version 0xffff", "ffff" + id, "ParseHeader: invalid version, want=2 have=65535."},
		{"zero file ID", "0002" + strings.Repeat("00", 16), "ParseHeader: file ID is all-zero."},
		{"base64 text (flattened symlink)", "4d456e626c3670474b756a5132", "ParseHeader: invalid length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := testutil.MustHex(t, c.hex)
			h, err := ParseHeader(buf)
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if h.Version != CurrentVersion || !bytes.Equal(h.Pack(), buf) {
					t.Errorf("got %+v, Pack %x", h, h.Pack())
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted: %+v", h)
			}
			if !errors.Is(err, ErrBadHeader) {
				t.Errorf("error does not wrap ErrBadHeader: %v", err)
			}
			if !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("error %q, want prefix %q", err, c.wantErr)
			}
		})
	}
}

func TestRandomHeader(t *testing.T) {
	ns := cryptocore.NewNonceSource()
	seen := map[[FileIDLen]byte]bool{}
	for _, src := range []*cryptocore.NonceSource{ns, nil} {
		for range 100 {
			h := RandomHeader(src)
			if seen[h.ID] {
				t.Fatal("file ID repeated")
			}
			seen[h.ID] = true
			buf := h.AppendTo([]byte("prefix"))
			if string(buf[:6]) != "prefix" || len(buf) != 6+HeaderLen {
				t.Fatalf("AppendTo = %x", buf)
			}
			back, err := ParseHeader(buf[6:])
			if err != nil || back != h {
				t.Fatalf("round trip: %+v, %v", back, err)
			}
		}
	}
}
