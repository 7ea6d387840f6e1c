package configfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gocryptfs/internal/testutil"
)

// FuzzParse feeds arbitrary bytes to Parse. It must never panic, and every
// accepted config must survive Marshal → Parse unchanged and be safe to
// summarize and (when scrypt is cheap) to unwrap.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testutil.TV1Config))
	f.Add([]byte(""))
	f.Add([]byte("{}"))
	f.Add([]byte(`{"Version":2,"FeatureFlags":["FIDO2","HKDF","GCMIV128"],"FIDO2":{"CredentialID":"AA==","HMACSalt":"AA==","AssertOptions":null},"LongNameMax":7}`))
	vd := testutil.VectorsDir(f)
	vectors, _ := filepath.Glob(filepath.Join(vd, "*", "*.conf"))
	hidden, _ := filepath.Glob(filepath.Join(vd, "*", ".*.conf"))
	for _, p := range append(vectors, hidden...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := Parse(data)
		if err != nil {
			if cf != nil {
				t.Fatal("non-nil config with error")
			}
			return
		}
		out, err := cf.Marshal()
		if err != nil {
			t.Fatalf("Marshal of an accepted config: %v", err)
		}
		cf2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of own output: %v\n%s", err, out)
		}
		out2, err := cf2.Marshal()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("Marshal not stable:\n%s\n%s", out, out2)
		}
		_ = cf.Info()
		_ = cf.ContentCipher()
		if n := cf.EffectiveLongNameMax(); n < 1 || n > MaxLongNameMax {
			t.Fatalf("EffectiveLongNameMax %d", n)
		}
		s := cf.ScryptObject
		if s.N <= 2048 && s.R <= 16 && s.P <= 2 {
			if mk, err := cf.DecryptMasterKey([]byte("test")); err == nil && len(mk) != 32 {
				t.Fatalf("master key of %d bytes", len(mk))
			}
		}
	})
}
