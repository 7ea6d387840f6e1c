package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestXrayDumpMasterKeyKeyFile: gocryptfs-xray -keyfile opens a key-file
// slot that gocryptfs -addkey -newkeyfile added, and prints the master key
// that the password slot gives.
func TestXrayDumpMasterKeyKeyFile(t *testing.T) {
	dir := initFS(t)
	kf := writeFile(t, "key", []byte("key file\x00bytes"))
	testutil.Expect(t, gocryptfs(t, "-addkey", "-extpass", "echo "+testutil.Password, "-scryptn", "10", "-newkeyfile", kf, dir), 0, "Key slot 1 (keyfile) added.")
	conf := filepath.Join(dir, "gocryptfs.conf")
	byPassword := xray(t, testutil.Password+"\n", "-dumpmasterkey", conf)
	testutil.Expect(t, byPassword, 0)
	byKeyFile := xray(t, "", "-dumpmasterkey", "-keyfile", kf, conf)
	testutil.Expect(t, byKeyFile, 0)
	if len(byPassword.Stdout) != 65 || byKeyFile.Stdout != byPassword.Stdout {
		t.Errorf("-keyfile printed %q, the password %q", byKeyFile.Stdout, byPassword.Stdout)
	}
	testutil.Expect(t, xray(t, "", "-dumpmasterkey", "-keyfile", writeFile(t, "other", []byte("other")), conf), 8,
		"The key file does not unlock any slot.")
}

// TestXrayVectorFiles rebuilds the files of TV-7, TV-10 and TV-14 from
// their recorded headers and nonces and checks the binary's output against
// the reference output of docs/format.md.
func TestXrayVectorFiles(t *testing.T) {
	for _, f := range testutil.VectorFiles() {
		t.Run(f.Name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), f.ID)
			if err := os.WriteFile(p, coretest.EncryptVectorFile(t, f), 0o644); err != nil {
				t.Fatal(err)
			}
			r := xray(t, "", append(f.XrayFlags, p)...)
			testutil.Expect(t, r, 0)
			if r.Stdout != f.XrayOutput {
				t.Errorf("got:\n%s\nwant:\n%s", r.Stdout, f.XrayOutput)
			}
		})
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
