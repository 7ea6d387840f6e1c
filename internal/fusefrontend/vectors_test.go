//go:build linux

package fusefrontend

import (
	"os"
	"slices"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// TestReferenceVectors mounts copies of the reference-written forward
// filesystems and reads their known contents.
func TestReferenceVectors(t *testing.T) {
	testutil.RequireFuse(t)
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			cfg := testConfig{
				cipher:         cryptocore.ContentCipher(v.Cipher),
				plaintextNames: v.PlaintextNames,
				deterministic:  v.DeterministicNames,
				padded64:       !v.Raw64,
				noHKDF:         !v.HKDF,
				masterKey:      v.Key(t),
			}
			cipher := testutil.CopyCipherVector(t, v.Name)
			tf := mountExisting(t, cfg, cipher, false)
			want := []string{"abs", "rel", "status.txt"}
			if v.HasLongName {
				want = append(want, testutil.VectorLongName)
			}
			slices.Sort(want)
			if got := listNames(t, tf.mnt); !slices.Equal(got, want) {
				t.Fatalf("listing %q", got)
			}
			if got := mustRead(t, tf.path("status.txt")); string(got) != testutil.VectorContent {
				t.Fatalf("status.txt: %q", got)
			}
			for link, target := range testutil.VectorSymlinks() {
				if got, err := os.Readlink(tf.path(link)); err != nil || got != target {
					t.Fatalf("readlink %s: %q %v", link, got, err)
				}
				if st := statOf(t, tf.path(link)); st.Size != int64(len(target)) {
					t.Fatalf("lstat %s size %d", link, st.Size)
				}
			}
			if got := mustRead(t, tf.path("rel")); string(got) != testutil.VectorContent {
				t.Fatalf("through rel: %q", got)
			}
			if v.HasLongName {
				if got := mustRead(t, tf.path(testutil.VectorLongName)); string(got) != testutil.VectorContent {
					t.Fatalf("long name file: %q", got)
				}
			}
			// Writing into the old filesystem keeps it readable.
			mustWrite(t, tf.path("new "+v.Name), []byte("new data"))
			if got := mustRead(t, tf.path("new "+v.Name)); string(got) != "new data" {
				t.Fatalf("new file: %q", got)
			}
		})
	}
}
