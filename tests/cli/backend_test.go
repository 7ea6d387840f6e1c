package cli_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestBackendsEndToEnd mounts filesystems of every cipher with
// -openssl=true and -openssl=false: what one backend writes, the other
// reads, through the mount. In a build without OpenSSL only false runs.
func TestBackendsEndToEnd(t *testing.T) {
	backends := []string{"-openssl=false", "-openssl=true"}
	if testutil.BuildTags() == "without_openssl" {
		backends = backends[:1]
	}
	data := make([]byte, 3<<20+1234) // several parallel batches and a partial block
	rand.Read(data)
	for _, cipher := range [][]string{nil, {"-xchacha"}, {"-aessiv"}} {
		name := "AES-GCM"
		if len(cipher) > 0 {
			name = cipher[0]
		}
		t.Run(name, func(t *testing.T) {
			dir := initFS(t, cipher...)
			for _, writer := range backends {
				mnt := mountFS(t, dir, "-extpass", "echo test", writer)
				p := filepath.Join(mnt, "data"+writer)
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				// Overwrite a range that straddles block boundaries (read-modify-write).
				f, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteAt(data[:10000], 4000); err != nil {
					t.Fatal(err)
				}
				f.Close()
				testutil.UnmountDir(t, mnt)
				want := append([]byte(nil), data...)
				copy(want[4000:], data[:10000])
				for _, reader := range backends {
					mnt := mountFS(t, dir, "-extpass", "echo test", reader)
					got, err := os.ReadFile(filepath.Join(mnt, "data"+writer))
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("written with %s, read with %s: %d bytes, equal=%v, err=%v", writer, reader, len(got), bytes.Equal(got, want), err)
					}
					testutil.UnmountDir(t, mnt)
				}
			}
		})
	}
}
