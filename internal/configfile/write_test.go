package configfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gocryptfs/internal/testutil"
)

// testLogN keeps scrypt cheap in tests.
const testLogN = ScryptMinLogN

func TestCreateFlags(t *testing.T) {
	cases := []struct {
		name  string
		args  CreateArgs
		flags []FeatureFlag
		lnm   uint8
	}{
		{"default", CreateArgs{}, []FeatureFlag{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64"}, 0},
		{"xchacha", CreateArgs{XChaCha20Poly1305: true}, []FeatureFlag{"HKDF", "XChaCha20Poly1305", "DirIV", "EMENames", "LongNames", "Raw64"}, 0},
		{"aessiv", CreateArgs{AESSIV: true}, []FeatureFlag{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64", "AESSIV"}, 0},
		{"reverse", CreateArgs{Reverse: true}, []FeatureFlag{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64", "AESSIV"}, 0},
		{"plaintextnames", CreateArgs{PlaintextNames: true, DeterministicNames: true, LongNameMax: 62}, []FeatureFlag{"HKDF", "GCMIV128", "PlaintextNames"}, 0},
		{"deterministic", CreateArgs{DeterministicNames: true}, []FeatureFlag{"HKDF", "GCMIV128", "EMENames", "LongNames", "Raw64"}, 0},
		{"longnamemax 62 (TV-13)", CreateArgs{LongNameMax: 62}, []FeatureFlag{"HKDF", "GCMIV128", "DirIV", "LongNameMax", "EMENames", "LongNames", "Raw64"}, 62},
		{"longnamemax 255", CreateArgs{LongNameMax: 255}, []FeatureFlag{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64"}, 0},
		{"everything", CreateArgs{XChaCha20Poly1305: true, DeterministicNames: true, LongNameMax: 100,
			FIDO2: &FIDO2Params{CredentialID: []byte("cred"), HMACSalt: seq(1, 32), AssertOptions: []string{"uv=true"}}},
			[]FeatureFlag{"HKDF", "XChaCha20Poly1305", "LongNameMax", "EMENames", "LongNames", "Raw64", "FIDO2"}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.args.LogN = testLogN
			c.args.Password = []byte("pw")
			cf, mk, err := Create(c.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cf.FeatureFlags, c.flags) {
				t.Errorf("flags %v, want %v", cf.FeatureFlags, c.flags)
			}
			if cf.LongNameMax != c.lnm {
				t.Errorf("LongNameMax %d, want %d", cf.LongNameMax, c.lnm)
			}
			if len(mk) != 32 {
				t.Fatalf("master key length %d", len(mk))
			}
			s := cf.ScryptObject
			if s.N != 1<<testLogN || s.R != 8 || s.P != 1 || s.KeyLen != 32 || len(s.Salt) != 32 || cf.Version != 2 {
				t.Errorf("bad scrypt object / version: %+v %d", s, cf.Version)
			}
			if len(cf.EncryptedKey) != 64 {
				t.Errorf("EncryptedKey %d bytes", len(cf.EncryptedKey))
			}
			got, err := cf.DecryptMasterKey([]byte("pw"))
			if err != nil || !bytes.Equal(got, mk) {
				t.Fatalf("unwrap: %v", err)
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	cases := []struct {
		name string
		args CreateArgs
		want error
	}{
		{"xchacha+aessiv", CreateArgs{XChaCha20Poly1305: true, AESSIV: true}, ErrInvalid},
		{"xchacha+reverse", CreateArgs{XChaCha20Poly1305: true, Reverse: true}, ErrInvalid},
		{"scryptn 9", CreateArgs{LogN: 9}, ErrScryptParams},
		{"scryptn -1", CreateArgs{LogN: -1}, ErrScryptParams},
		{"scryptn 29", CreateArgs{LogN: 29}, ErrScryptParams},
	}
	for _, c := range cases {
		c.args.Password = []byte("pw")
		if _, _, err := Create(c.args); !errors.Is(err, c.want) {
			t.Errorf("%s: want %v, got %v", c.name, c.want, err)
		}
	}
	if _, _, err := Create(CreateArgs{LogN: testLogN, MasterKey: make([]byte, 31)}); err == nil {
		t.Error("31-byte master key accepted")
	}
}

func TestCreateDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("scrypt with N=2^16")
	}
	mk := seq(0, 32)
	cf, got, err := Create(CreateArgs{Password: []byte("pw"), MasterKey: mk, Creator: "gocryptfs v9"})
	if err != nil {
		t.Fatal(err)
	}
	if cf.ScryptObject.N != 1<<ScryptDefaultLogN || cf.Creator != "gocryptfs v9" || !bytes.Equal(got, mk) {
		t.Errorf("defaults: N=%d Creator=%q", cf.ScryptObject.N, cf.Creator)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfDefaultName)
	mk := seq(0, 32)
	cf, _, err := Create(CreateArgs{Path: path, Password: []byte("pw"), MasterKey: mk, Creator: "gocryptfs test", LogN: testLogN, LongNameMax: 62})
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.WriteFile(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o400 {
		t.Errorf("mode %v, want 0400", fi.Mode().Perm())
	}
	if _, err := os.Lstat(path + TmpSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("tmp file left behind: %v", err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.DecryptMasterKey([]byte("pw"))
	if err != nil || !bytes.Equal(got, mk) {
		t.Fatalf("unwrap: %x %v", got, err)
	}
	if loaded.Creator != "gocryptfs test" || loaded.EffectiveLongNameMax() != 62 {
		t.Errorf("fields lost: %+v", loaded)
	}
	// The written bytes are exactly Marshal's output, LongNameMax last.
	onDisk, _ := os.ReadFile(path)
	want, _ := cf.Marshal()
	if !bytes.Equal(onDisk, want) || !bytes.HasSuffix(onDisk, []byte("\t\"LongNameMax\": 62\n}\n")) {
		t.Errorf("file content:\n%s", onDisk)
	}
	// Overwriting an existing (read-only) config works: rename replaces it.
	if err := loaded.WriteFile(); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
}

func TestWriteStaleTmp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfDefaultName)
	if err := os.WriteFile(path, []byte(testutil.TV1Config), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+TmpSuffix, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	cf, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.EncryptMasterKey(testutil.MasterKey(), []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	err = cf.WriteFile()
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("want fs.ErrExist, got %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != testutil.TV1Config {
		t.Error("existing config modified")
	}
	if b, _ := os.ReadFile(path + TmpSuffix); string(b) != "stale" {
		t.Error("stale tmp file not left alone")
	}
}

// A failing rename removes the temporary file WriteFile created.
func TestWriteRenameFailureCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ConfDefaultName)
	// A non-empty directory at the target path makes rename(2) fail.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	cf := tv1Conf(t)
	cf.SetPath(path)
	if err := cf.WriteFile(); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	if _, err := os.Lstat(path + TmpSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("tmp file not removed: %v", err)
	}
}

func TestWriteRefusals(t *testing.T) {
	cf := tv1Conf(t)
	if err := cf.WriteFile(); !errors.Is(err, ErrNoPath) {
		t.Errorf("no path: %v", err)
	}
	cf.SetPath(filepath.Join(t.TempDir(), ConfDefaultName))
	cf.Version = 3
	if err := cf.WriteFile(); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid config written: %v", err)
	}
	cf.Version = 2
	cf.SetPath(filepath.Join(t.TempDir(), "missing-dir", ConfDefaultName))
	if err := cf.WriteFile(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// -passwd: re-wrapping keeps Creator, flags and the master key, changes
// salt, nonce and EncryptedKey, and keeps N unless a new logN is given.
func TestRewrap(t *testing.T) {
	mk := testutil.MasterKey()
	for _, c := range []struct {
		name  string
		conf  func() *ConfFile
		logN  int
		wantN int
	}{
		{"TV-1 keep N", func() *ConfFile { return tv1Conf(t) }, 0, 1024},
		{"TV-1 logN 11", func() *ConfFile { return tv1Conf(t) }, 11, 2048},
		{"legacy keep N", func() *ConfFile {
			cf := &ConfFile{Creator: "old", Version: 2, FeatureFlags: []FeatureFlag{FlagGCMIV128, FlagDirIV}, ScryptObject: ScryptParams{N: 1024}}
			if err := cf.encryptMasterKey(mk, []byte("test"), 0, seq(0x40, 32), seq(0xa0, 12)); err != nil {
				t.Fatal(err)
			}
			return cf
		}, 0, 1024},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ConfDefaultName)
			orig := c.conf()
			orig.SetPath(path)
			if err := orig.WriteFile(); err != nil {
				t.Fatal(err)
			}
			cf, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			old, err := cf.DecryptMasterKey([]byte("test"))
			if err != nil {
				t.Fatal(err)
			}
			if err := cf.EncryptMasterKey(old, []byte("new password"), c.logN); err != nil {
				t.Fatal(err)
			}
			if err := cf.WriteFile(); err != nil {
				t.Fatal(err)
			}
			cf, err = Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if cf.Creator != orig.Creator || !slices.Equal(cf.FeatureFlags, orig.FeatureFlags) {
				t.Errorf("Creator/flags changed: %q %v", cf.Creator, cf.FeatureFlags)
			}
			if cf.ScryptObject.N != c.wantN {
				t.Errorf("N=%d, want %d", cf.ScryptObject.N, c.wantN)
			}
			if bytes.Equal(cf.ScryptObject.Salt, orig.ScryptObject.Salt) ||
				bytes.Equal(cf.EncryptedKey[:cf.wrapNonceLen()], orig.EncryptedKey[:orig.wrapNonceLen()]) ||
				bytes.Equal(cf.EncryptedKey, orig.EncryptedKey) {
				t.Error("salt, nonce or EncryptedKey not renewed")
			}
			if len(cf.EncryptedKey) != len(orig.EncryptedKey) {
				t.Errorf("EncryptedKey length %d, was %d", len(cf.EncryptedKey), len(orig.EncryptedKey))
			}
			got, err := cf.DecryptMasterKey([]byte("new password"))
			if err != nil || !bytes.Equal(got, mk) {
				t.Fatalf("new password: %x %v", got, err)
			}
			if _, err := cf.DecryptMasterKey([]byte("test")); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("old password still works: %v", err)
			}
		})
	}
}

func TestRewrapBadLogN(t *testing.T) {
	for _, logN := range []int{1, 9, 29, 64} {
		cf := tv1Conf(t)
		before, _ := cf.Marshal()
		err := cf.EncryptMasterKey(testutil.MasterKey(), []byte("x"), logN)
		if !errors.Is(err, ErrScryptParams) {
			t.Errorf("logN %d: want ErrScryptParams, got %v", logN, err)
		}
		if after, _ := cf.Marshal(); !bytes.Equal(before, after) {
			t.Errorf("logN %d: config modified on error", logN)
		}
	}
}
