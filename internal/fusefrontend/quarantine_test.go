//go:build linux

package fusefrontend

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"gocryptfs/internal/nametransform"
)

// TestQuarantineHidden: gocryptfs.quarantine in the CIPHERDIR root (where
// -fsck -repair keeps what it took out) is never shown nor reachable, in
// every naming mode, without a warning about an undecryptable name; with
// plaintext names the name cannot be created either.
func TestQuarantineHidden(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  testConfig
	}{
		{"encrypted", testConfig{}},
		{"badname", testConfig{badname: []string{"*"}}},
		{"deterministic", testConfig{deterministic: true}},
		{"plaintextnames", testConfig{plaintextNames: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := mountFS(t, tc.cfg)
			q := filepath.Join(tf.cipher, nametransform.QuarantineDirName, "20260102T030405Z")
			if err := os.MkdirAll(q, 0o700); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(q, "x"), []byte("old"))
			mustWrite(t, tf.path("visible"), []byte("v"))
			if got := listNames(t, tf.mnt); !slices.Equal(got, []string{"visible"}) {
				t.Fatalf("listing %v", got)
			}
			_, err := os.Stat(tf.path(nametransform.QuarantineDirName))
			errIs(t, err, syscall.ENOENT, "stat gocryptfs.quarantine")
			if n := tf.logs.CountLines(nametransform.QuarantineDirName); n != 0 {
				t.Errorf("%d log lines about the quarantine:\n%s", n, tf.logs)
			}
			if tc.cfg.plaintextNames {
				errIs(t, os.Mkdir(tf.path(nametransform.QuarantineDirName), 0o755), syscall.EPERM, "mkdir gocryptfs.quarantine")
			}
			// Below the root it is an ordinary name.
			if err := os.Mkdir(tf.path("d"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, tf.path("d/"+nametransform.QuarantineDirName), []byte("fine"))
			if got := listNames(t, tf.path("d")); !slices.Equal(got, []string{nametransform.QuarantineDirName}) {
				t.Fatalf("listing d %v", got)
			}
		})
	}
}
