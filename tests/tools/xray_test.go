package tools_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

func TestXrayDumpMasterKeyVectors(t *testing.T) {
	for _, v := range testutil.AllVectors() {
		t.Run(v.Name, func(t *testing.T) {
			conf := filepath.Join(testutil.VectorDir(t, v.Name), v.ConfigName())
			r := xray(t, testutil.Password+"\n", "-dumpmasterkey", conf)
			testutil.Expect(t, r, 0)
			if want := strings.ReplaceAll(v.MasterKey, "-", "") + "\n"; r.Stdout != want {
				t.Errorf("got %q, want %q", r.Stdout, want)
			}
			r = xray(t, "wrong\n", "-dumpmasterkey", conf)
			testutil.Expect(t, r, 8, "Password incorrect.")
			if r.Stdout != "" {
				t.Errorf("stdout %q", r.Stdout)
			}
		})
	}
	for _, old := range testutil.TooOldVectors() {
		t.Run(old, func(t *testing.T) {
			testutil.Expect(t, xray(t, "test\n", "-dumpmasterkey", filepath.Join(testutil.VectorDir(t, old), "gocryptfs.conf")), 27)
		})
	}
	testutil.Expect(t, xray(t, "test\n", "-dumpmasterkey", filepath.Join(t.TempDir(), "missing.conf")), 11)
}

// TestXrayTV7 builds the TV-7 files from their recorded header and nonces
// and checks the tool's output against the reference output of FORMAT.md.
func TestXrayTV7(t *testing.T) {
	ce := coretest.New(t, coretest.Options{HKDF: true}).CE
	build := func(id string, nonces []string, plain []byte) string {
		p := filepath.Join(t.TempDir(), id)
		if err := os.WriteFile(p, coretest.EncryptFile(t, ce, id, nonces, plain), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := build("95e7ef1ef9d7205ba8409fa6f9e4ba46", []string{"9d0df759629108b2575bb1eb01dd67ad"}, []byte("a"))
	f4097 := build("14383a4daf35c95c1f1cbd8afbd1b1ce",
		[]string{"324face0a5bee907b5b557b9af8bddc8", "f723d9e35e29fa2f3e32bba787718673"}, bytes.Repeat([]byte("z"), 4097))
	r := xray(t, "", one)
	testutil.Expect(t, r, 0)
	if want := "Header: Version: 2, Id: 95e7ef1ef9d7205ba8409fa6f9e4ba46, assuming AES-GCM-256 mode\n" +
		"Block  0: IV: 9d0df759629108b2575bb1eb01dd67ad, Tag: b8c8a3a7c00e246b048bfee30aeda6f6, Offset:    18 Len: 33\n"; r.Stdout != want {
		t.Errorf("one:\n%s\nwant:\n%s", r.Stdout, want)
	}
	r = xray(t, "", f4097)
	testutil.Expect(t, r, 0)
	if want := "Header: Version: 2, Id: 14383a4daf35c95c1f1cbd8afbd1b1ce, assuming AES-GCM-256 mode\n" +
		"Block  0: IV: 324face0a5bee907b5b557b9af8bddc8, Tag: 652ed5fc7ba69f6ea670b549116914ce, Offset:    18 Len: 4128\n" +
		"Block  1: IV: f723d9e35e29fa2f3e32bba787718673, Tag: 0685bd5b73c6da93ea67212c0da2d1a4, Offset:  4146 Len: 33\n"; r.Stdout != want {
		t.Errorf("f4097:\n%s\nwant:\n%s", r.Stdout, want)
	}
	// TV-14 f5000 (reverse mode, derived IVs) with -aessiv.
	sivCE := coretest.New(t, coretest.Options{Cipher: cryptocore.AESSIV, HKDF: true}).CE
	plain := make([]byte, 5000)
	for i := range plain {
		plain[i] = byte('A' + i%26)
	}
	cpath := "iah1MkNOCMZe5AW-W605oQ"
	id := nametransform.PathIV(cpath, nametransform.PurposeFileID)
	out := append([]byte{0, 2}, id...)
	out, err := sivCE.EncryptBlocksDerived(out, plain, 0, id, nametransform.PathIV(cpath, nametransform.PurposeBlock0IV))
	if err != nil {
		t.Fatal(err)
	}
	f5000 := filepath.Join(t.TempDir(), cpath)
	os.WriteFile(f5000, out, 0o644)
	r = xray(t, "", "-aessiv", f5000)
	testutil.Expect(t, r, 0)
	if want := "Header: Version: 2, Id: 3305c99eeb95f5b27d13b09aa10d8682, assuming AES-SIV-512 mode\n" +
		"Block  0: IV: e01683d2594243feb1a501820556f035, Tag: 6964a31b391a72d2a02afccaa0821c7b, Offset:    18 Len: 4128\n" +
		"Block  1: IV: e01683d2594243feb1a501820556f036, Tag: 28b0d2c135d4c16fe81abb06205103d3, Offset:  4146 Len: 936\n"; r.Stdout != want {
		t.Errorf("f5000:\n%s\nwant:\n%s", r.Stdout, want)
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
			testutil.Expect(t, r, 0)
			if r.Stdout != "empty file\n" {
				t.Errorf("empty: %q", r.Stdout)
			}
			r = xray(t, "", args("hole")...)
			testutil.Expect(t, r, 0, "assuming "+c.algo+" mode")
			lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			if len(lines) != 5 {
				t.Fatalf("hole: %q", r.Stdout)
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
