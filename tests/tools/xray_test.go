package tools_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

// vectorKeys are the master keys of the reference vectors (their README).
var vectorKeys = map[string]string{
	"v0.7":                             "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf",
	"v0.7-plaintextnames":              "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7",
	"v0.9":                             "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c",
	"v1.1-aessiv":                      "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b",
	"v1.3":                             "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e",
	"v2.2-deterministic-names":         "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e",
	"v2.2-xchacha":                     "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26",
	"v2.2-xchacha-deterministic-names": "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39",
	"v1.1-reverse":                     "68b51855-042abd80-635ae1ba-90152a78-2ec2d243-832ac72a-eab0561a-f2d37913",
	"v1.1-reverse-plaintextnames":      "e7fb8f0d-2a81df9e-26611e4b-5540b218-e48aa458-c2a623af-d0c82637-1466b5f2",
	"v1.3-reverse":                     "2290a7f4-3e1908fb-b006f7d9-261bdaf1-4b72bc38-3b24956c-db7d8a8d-d996076a",
}

func TestXrayDumpMasterKeyVectors(t *testing.T) {
	for v, key := range vectorKeys {
		t.Run(v, func(t *testing.T) {
			conf := filepath.Join(vectorsDir, v, "gocryptfs.conf")
			if strings.Contains(v, "reverse") {
				conf = filepath.Join(vectorsDir, v, ".gocryptfs.reverse.conf")
			}
			r := xray(t, testPassword+"\n", "-dumpmasterkey", conf)
			expect(t, r, 0)
			if want := strings.ReplaceAll(key, "-", "") + "\n"; r.stdout != want {
				t.Errorf("got %q, want %q", r.stdout, want)
			}
			r = xray(t, "wrong\n", "-dumpmasterkey", conf)
			expect(t, r, 8, "Password incorrect.")
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
	for _, old := range []string{"v0.4", "v0.5", "v0.6", "v0.6-plaintextnames"} {
		t.Run(old, func(t *testing.T) {
			expect(t, xray(t, "test\n", "-dumpmasterkey", filepath.Join(vectorsDir, old, "gocryptfs.conf")), 27)
		})
	}
	expect(t, xray(t, "test\n", "-dumpmasterkey", filepath.Join(t.TempDir(), "missing.conf")), 11)
}

// TestXrayTV7 builds the TV-7 files from their recorded header and nonces
// and checks the tool's output against the reference output of FORMAT.md.
func TestXrayTV7(t *testing.T) {
	mk, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: cryptocore.AESGCM, HKDF: true})
	if err != nil {
		t.Fatal(err)
	}
	ce, err := contentenc.New(cc, contentenc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	build := func(id string, nonces []string, plain []byte) string {
		h := contentenc.FileHeader{Version: 2}
		b, _ := hex.DecodeString(id)
		copy(h.ID[:], b)
		out := h.Pack()
		for i, n := range nonces {
			nb, _ := hex.DecodeString(n)
			out, err = ce.EncryptBlockNonce(out, plain[i*4096:min(len(plain), (i+1)*4096)], uint64(i), h.ID[:], nb)
			if err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(t.TempDir(), id)
		os.WriteFile(p, out, 0o644)
		return p
	}
	one := build("95e7ef1ef9d7205ba8409fa6f9e4ba46", []string{"9d0df759629108b2575bb1eb01dd67ad"}, []byte("a"))
	f4097 := build("14383a4daf35c95c1f1cbd8afbd1b1ce",
		[]string{"324face0a5bee907b5b557b9af8bddc8", "f723d9e35e29fa2f3e32bba787718673"}, bytes.Repeat([]byte("z"), 4097))
	r := xray(t, "", one)
	expect(t, r, 0)
	if want := "Header: Version: 2, Id: 95e7ef1ef9d7205ba8409fa6f9e4ba46, assuming AES-GCM-256 mode\n" +
		"Block  0: IV: 9d0df759629108b2575bb1eb01dd67ad, Tag: b8c8a3a7c00e246b048bfee30aeda6f6, Offset:    18 Len: 33\n"; r.stdout != want {
		t.Errorf("one:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = xray(t, "", f4097)
	expect(t, r, 0)
	if want := "Header: Version: 2, Id: 14383a4daf35c95c1f1cbd8afbd1b1ce, assuming AES-GCM-256 mode\n" +
		"Block  0: IV: 324face0a5bee907b5b557b9af8bddc8, Tag: 652ed5fc7ba69f6ea670b549116914ce, Offset:    18 Len: 4128\n" +
		"Block  1: IV: f723d9e35e29fa2f3e32bba787718673, Tag: 0685bd5b73c6da93ea67212c0da2d1a4, Offset:  4146 Len: 33\n"; r.stdout != want {
		t.Errorf("f4097:\n%s\nwant:\n%s", r.stdout, want)
	}
	// TV-14 f5000 (reverse mode, derived IVs) with -aessiv.
	sivCC, _ := cryptocore.New(mk, cryptocore.Options{Cipher: cryptocore.AESSIV, HKDF: true})
	sivCE, _ := contentenc.New(sivCC, contentenc.Options{})
	plain := make([]byte, 5000)
	for i := range plain {
		plain[i] = byte('A' + i%26)
	}
	cpath := "iah1MkNOCMZe5AW-W605oQ"
	id := nametransform.PathIV(cpath, nametransform.PurposeFileID)
	out := append([]byte{0, 2}, id...)
	out, err = sivCE.EncryptBlocksDerived(out, plain, 0, id, nametransform.PathIV(cpath, nametransform.PurposeBlock0IV))
	if err != nil {
		t.Fatal(err)
	}
	f5000 := filepath.Join(t.TempDir(), cpath)
	os.WriteFile(f5000, out, 0o644)
	r = xray(t, "", "-aessiv", f5000)
	expect(t, r, 0)
	if want := "Header: Version: 2, Id: 3305c99eeb95f5b27d13b09aa10d8682, assuming AES-SIV-512 mode\n" +
		"Block  0: IV: e01683d2594243feb1a501820556f035, Tag: 6964a31b391a72d2a02afccaa0821c7b, Offset:    18 Len: 4128\n" +
		"Block  1: IV: e01683d2594243feb1a501820556f036, Tag: 28b0d2c135d4c16fe81abb06205103d3, Offset:  4146 Len: 936\n"; r.stdout != want {
		t.Errorf("f5000:\n%s\nwant:\n%s", r.stdout, want)
	}
}

// TestXrayFreshFiles inspects files written through a mount: sizes, holes
// and the three ciphers' layouts.
func TestXrayFreshFiles(t *testing.T) {
	for _, c := range []struct {
		initFlag, xrayFlag, algo string
		nonceHex                 int
		cbs                      int
	}{
		{"", "", "AES-GCM-256", 32, 4128},
		{"-aessiv", "-aessiv", "AES-SIV-512", 32, 4128},
		{"-xchacha", "-xchacha", "XChaCha20-Poly1305", 48, 4136},
	} {
		t.Run(c.algo, func(t *testing.T) {
			var flags []string
			if c.initFlag != "" {
				flags = append(flags, c.initFlag)
			}
			dir, enc := freshTree(t, flags...)
			args := func(p string) []string {
				if c.xrayFlag != "" {
					return []string{c.xrayFlag, filepath.Join(dir, enc[p])}
				}
				return []string{filepath.Join(dir, enc[p])}
			}
			r := xray(t, "", args("empty")...)
			expect(t, r, 0)
			if r.stdout != "empty file\n" {
				t.Errorf("empty: %q", r.stdout)
			}
			r = xray(t, "", args("hole")...)
			expect(t, r, 0, "assuming "+c.algo+" mode")
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) != 5 {
				t.Fatalf("hole: %q", r.stdout)
			}
			zero := strings.Repeat("0", c.nonceHex)
			for i := 1; i <= 3; i++ {
				if !strings.Contains(lines[i], "IV: "+zero+", Tag: "+strings.Repeat("0", 32)+",") {
					t.Errorf("hole block %d: %q", i-1, lines[i])
				}
			}
			if !strings.HasSuffix(lines[4], fmt.Sprintf(" Offset: %5d Len: %d", 18+3*c.cbs, 103+c.cbs-4096)) || strings.Contains(lines[4], "IV: "+zero) {
				t.Errorf("last block: %q", lines[4])
			}
		})
	}
}
