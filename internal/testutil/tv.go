package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TV1Config is the config file of FORMAT.md 2.2 (TV-1), byte for byte:
// password "test", master key MasterKeyHex, scrypt N=1024.
const TV1Config = `{
	"Creator": "gocryptfs ref-1a03e99",
	"EncryptedKey": "HdhoRtHSTviqYGXpGKpVcYgKrPExiL/VxkuhX12tRWxxF3FPSQQo5iUCe7aFGd3yI/INU12Dn+LWoFPRkFJ/Jw==",
	"ScryptObject": {
		"Salt": "UsLgvZb3RjlEVoJiL+gMjFiDNONs75BodbnoVXfgWDE=",
		"N": 1024,
		"R": 8,
		"P": 1,
		"KeyLen": 32
	},
	"Version": 2,
	"FeatureFlags": [
		"HKDF",
		"GCMIV128",
		"DirIV",
		"EMENames",
		"LongNames",
		"Raw64"
	]
}
`

// TV-4 (FORMAT.md): the directory IVs of the forward filesystem's root and
// of dir1, and dir1's encrypted name.
const (
	TV4RootIV = "64f9baaad0c7f58019d644498392d072"
	TV4Dir1   = "AcJVqps12xZ4feukhiQfOw"
	TV4Dir1IV = "9a04a0542483152e05223fd165350d5b"
)

// TV4CipherDir creates TV-4's directory structure in a new temp dir and
// returns it: gocryptfs.diriv in the root and in dir1. A forward mount of
// it with the TV master key (AES-GCM, HKDF, Raw64) names entries as TV-4
// does.
func TV4CipherDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	d1 := filepath.Join(dir, TV4Dir1)
	if err := os.Mkdir(d1, 0o755); err != nil {
		t.Fatal(err)
	}
	for d, iv := range map[string]string{dir: TV4RootIV, d1: TV4Dir1IV} {
		if err := os.WriteFile(filepath.Join(d, "gocryptfs.diriv"), MustHex(t, iv), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
