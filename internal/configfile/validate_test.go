package configfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

func TestValidateRules(t *testing.T) {
	flags := func(f ...FeatureFlag) func(*ConfFile) {
		return func(cf *ConfFile) { cf.FeatureFlags = f }
	}
	cases := []struct {
		name    string
		mutate  func(*ConfFile)
		rule    int    // 0: must be accepted
		msgPart string // substring of the message, if non-empty
	}{
		{"TV-1 as is", func(*ConfFile) {}, 0, ""},
		{"version 1", func(cf *ConfFile) { cf.Version = 1 }, RuleVersion, "unsupported on-disk format 1"},
		{"version 3", func(cf *ConfFile) { cf.Version = 3 }, RuleVersion, "unsupported on-disk format 3"},
		{"version 0", func(cf *ConfFile) { cf.Version = 0 }, RuleVersion, ""},

		{"N=1000", func(cf *ConfFile) { cf.ScryptObject.N = 1000 }, RuleScrypt, "below"},
		{"N=512", func(cf *ConfFile) { cf.ScryptObject.N = 512 }, RuleScrypt, "below"},
		{"N=0", func(cf *ConfFile) { cf.ScryptObject.N = 0 }, RuleScrypt, ""},
		{"N=-1024", func(cf *ConfFile) { cf.ScryptObject.N = -1024 }, RuleScrypt, ""},
		{"N=1536 not power of two", func(cf *ConfFile) { cf.ScryptObject.N = 1536 }, RuleScrypt, "power of two"},
		{"N=2^29", func(cf *ConfFile) { cf.ScryptObject.N = 1 << 29 }, RuleScrypt, "maximum"},
		{"N=2^28", func(cf *ConfFile) { cf.ScryptObject.N = 1 << 28 }, 0, ""},
		{"R=4", func(cf *ConfFile) { cf.ScryptObject.R = 4 }, RuleScrypt, "R=4"},
		{"R=16", func(cf *ConfFile) { cf.ScryptObject.R = 16 }, 0, ""},
		{"R huge", func(cf *ConfFile) { cf.ScryptObject.R = 1 << 40 }, RuleScrypt, "memory"},
		{"P=0", func(cf *ConfFile) { cf.ScryptObject.P = 0 }, RuleScrypt, "P=0"},
		{"P=2", func(cf *ConfFile) { cf.ScryptObject.P = 2 }, 0, ""},
		{"P huge", func(cf *ConfFile) { cf.ScryptObject.P = 1 << 62 }, RuleScrypt, "too large"},
		{"salt 31 bytes", func(cf *ConfFile) { cf.ScryptObject.Salt = cf.ScryptObject.Salt[:31] }, RuleScrypt, "salt"},
		{"salt missing", func(cf *ConfFile) { cf.ScryptObject.Salt = nil }, RuleScrypt, "salt"},
		{"salt 64 bytes", func(cf *ConfFile) { cf.ScryptObject.Salt = append(cf.ScryptObject.Salt, cf.ScryptObject.Salt...) }, 0, ""},
		{"KeyLen 16", func(cf *ConfFile) { cf.ScryptObject.KeyLen = 16 }, RuleScrypt, "KeyLen"},
		{"KeyLen 64", func(cf *ConfFile) { cf.ScryptObject.KeyLen = 64 }, RuleScrypt, "KeyLen"},

		{"unknown flag", flags(FlagHKDF, FlagGCMIV128, "Foo"), RuleUnknownFlag, `unknown feature flag "Foo"`},
		{"flag case matters", flags(FlagHKDF, "gcmiv128"), RuleUnknownFlag, `"gcmiv128"`},
		{"empty flag", flags(FlagHKDF, FlagGCMIV128, ""), RuleUnknownFlag, ""},

		{"xchacha+aessiv", flags(FlagHKDF, FlagXChaCha20Poly1305, FlagAESSIV), RuleXChaChaAESSIV, "mutually exclusive"},
		{"xchacha+aessiv+gcmiv128", flags(FlagHKDF, FlagGCMIV128, FlagXChaCha20Poly1305, FlagAESSIV), RuleXChaChaAESSIV, ""},
		{"aessiv without GCMIV128", flags(FlagHKDF, FlagAESSIV, FlagDirIV), RuleAESSIVNeedsGCM128, "requires GCMIV128"},
		{"xchacha with GCMIV128", flags(FlagHKDF, FlagGCMIV128, FlagXChaCha20Poly1305), RuleXChaCha, "forbids GCMIV128"},
		{"xchacha without HKDF", flags(FlagXChaCha20Poly1305, FlagDirIV), RuleXChaCha, "requires HKDF"},
		{"no GCMIV128 (v0.6)", flags(FlagDirIV, FlagEMENames), RuleGCMNeedsGCMIV128, "v0.6 or older"},
		{"no flags at all (v0.4)", flags(), RuleGCMNeedsGCMIV128, "v0.6 or older"},
		{"plaintextnames only (v0.6)", flags(FlagPlaintextNames), RuleGCMNeedsGCMIV128, ""},

		{"plaintextnames ok", flags(FlagHKDF, FlagGCMIV128, FlagPlaintextNames), 0, ""},
		{"plaintextnames+EMENames", flags(FlagGCMIV128, FlagPlaintextNames, FlagEMENames), RulePlaintextNames, "forbids EMENames"},
		{"plaintextnames+DirIV", flags(FlagGCMIV128, FlagPlaintextNames, FlagDirIV), RulePlaintextNames, "forbids DirIV"},
		{"plaintextnames+LongNames", flags(FlagGCMIV128, FlagPlaintextNames, FlagLongNames), RulePlaintextNames, "forbids LongNames"},
		{"plaintextnames+Raw64", flags(FlagGCMIV128, FlagPlaintextNames, FlagRaw64), RulePlaintextNames, "forbids Raw64"},
		{"plaintextnames+LongNameMax", func(cf *ConfFile) {
			cf.FeatureFlags = []FeatureFlag{FlagGCMIV128, FlagPlaintextNames, FlagLongNameMax}
			cf.LongNameMax = 62
		}, RulePlaintextNames, "forbids LongNameMax"},

		{"LongNameMax field without flag", func(cf *ConfFile) { cf.LongNameMax = 62 }, RuleLongNameMax, "missing"},
		{"LongNameMax flag without field", flags(FlagHKDF, FlagGCMIV128, FlagDirIV, FlagLongNameMax), RuleLongNameMax, "missing"},
		{"LongNameMax flag and field", func(cf *ConfFile) {
			cf.FeatureFlags = append(cf.FeatureFlags, FlagLongNameMax)
			cf.LongNameMax = 62
		}, 0, ""},

		{"FIDO2 flag without object", flags(FlagHKDF, FlagGCMIV128, FlagFIDO2), RuleFIDO2, "FIDO2"},
		{"FIDO2 flag with object", func(cf *ConfFile) {
			cf.FeatureFlags = append(cf.FeatureFlags, FlagFIDO2)
			cf.FIDO2 = &FIDO2Params{CredentialID: []byte{1}, HMACSalt: seq(0, 32)}
		}, 0, ""},

		{"legacy no HKDF", flags(FlagGCMIV128, FlagDirIV, FlagEMENames), 0, ""},
		{"legacy no EMENames/LongNames/Raw64", flags(FlagGCMIV128, FlagDirIV), 0, ""},
		{"duplicates harmless", flags(FlagHKDF, FlagGCMIV128, FlagGCMIV128, FlagDirIV, FlagDirIV), 0, ""},
		{"xchacha ok", flags(FlagHKDF, FlagXChaCha20Poly1305, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64), 0, ""},
		{"aessiv legacy ok", flags(FlagGCMIV128, FlagAESSIV), 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf := tv1Conf(t)
			c.mutate(cf)
			check := func(err error) {
				t.Helper()
				if c.rule == 0 {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("want a ValidationError for rule %d, got %v", c.rule, err)
				}
				if ve.Rule != c.rule {
					t.Errorf("rule %d (%v), want %d", ve.Rule, ve, c.rule)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Error("does not match ErrInvalid")
				}
				if errors.Is(err, ErrTooOld) != (c.rule == RuleGCMNeedsGCMIV128) {
					t.Errorf("ErrTooOld match wrong for rule %d", ve.Rule)
				}
				if errors.Is(err, ErrMalformed) {
					t.Error("matches ErrMalformed")
				}
				if !strings.Contains(err.Error(), c.msgPart) {
					t.Errorf("message %q lacks %q", err, c.msgPart)
				}
			}
			check(cf.Validate())
			// The same through the JSON path.
			data, err := cf.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data)
			check(err)
		})
	}
}

func TestParseMalformed(t *testing.T) {
	cases := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"whitespace", " \n"},
		{"open brace", "{"},
		{"truncated TV-1", testutil.TV1Config[:len(testutil.TV1Config)/2]},
		{"truncated before final brace", strings.TrimSuffix(testutil.TV1Config, "}\n")},
		{"array", "[]"},
		{"string", `"x"`},
		{"trailing garbage", testutil.TV1Config + "x"},
		{"two objects", testutil.TV1Config + testutil.TV1Config},
		{"version too large for uint16", strings.Replace(testutil.TV1Config, `"Version": 2`, `"Version": 70000`, 1)},
		{"version negative", strings.Replace(testutil.TV1Config, `"Version": 2`, `"Version": -2`, 1)},
		{"version as string", strings.Replace(testutil.TV1Config, `"Version": 2`, `"Version": "2"`, 1)},
		{"N as float", strings.Replace(testutil.TV1Config, `"N": 1024`, `"N": 1024.5`, 1)},
		{"bad base64 key", strings.Replace(testutil.TV1Config, `"HdhoRtHST`, `"!!!!RtHST`, 1)},
		{"flags not strings", strings.Replace(testutil.TV1Config, `"HKDF",`, `1,`, 1)},
		{"LongNameMax 256", strings.Replace(testutil.TV1Config, `"Version": 2`, `"LongNameMax": 256, "Version": 2`, 1)},
		{"binary", "\x00\x01\x02"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.data))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("want ErrMalformed, got %v", err)
			}
			if errors.Is(err, ErrInvalid) {
				t.Error("malformed JSON must not match ErrInvalid")
			}
		})
	}
}

// The reference reader is encoding/json: case-insensitive keys, unknown
// keys ignored, JSON null for the flags.
func TestParseLenient(t *testing.T) {
	lower := strings.NewReplacer(`"Version"`, `"version"`, `"ScryptObject"`, `"scryptobject"`, `"KeyLen"`, `"keylen"`).Replace(testutil.TV1Config)
	extra := strings.Replace(testutil.TV1Config, `"Version": 2`, `"Unknown": {"x": [1,2]}, "Version": 2`, 1)
	for name, data := range map[string]string{"lower-case keys": lower, "unknown key": extra} {
		cf, err := Parse([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if mk, err := cf.DecryptMasterKey([]byte("test")); err != nil || len(mk) != 32 {
			t.Fatalf("%s: unwrap: %v", name, err)
		}
	}
	_, err := Parse([]byte(strings.Replace(testutil.TV1Config, `"FeatureFlags": [`, `"FeatureFlags": null, "X": [`, 1)))
	if !errors.Is(err, ErrTooOld) {
		t.Errorf("null flags: want ErrTooOld, got %v", err)
	}
	_, err = Parse([]byte("null"))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("JSON null: want ErrInvalid, got %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "nope", ConfDefaultName)
	if _, err := Load(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	} else if !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file error does not name it: %v", err)
	}
	cases := []struct {
		name string
		path string
		want error
	}{
		{"empty file", write("empty", ""), ErrMalformed},
		{"truncated", write("trunc", testutil.TV1Config[:100]), ErrMalformed},
		{"too old", write("old", strings.Replace(testutil.TV1Config, `"GCMIV128",`, "", 1)), ErrTooOld},
		{"unknown flag", write("unk", strings.Replace(testutil.TV1Config, `"Raw64"`, `"Raw65"`, 1)), ErrInvalid},
		{"huge", write("huge", testutil.TV1Config+strings.Repeat(" ", maxConfSize)), ErrMalformed},
	}
	for _, c := range cases {
		if _, err := Load(c.path); !errors.Is(err, c.want) {
			t.Errorf("%s: want %v, got %v", c.name, c.want, err)
		} else if !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error does not name the file: %v", c.name, err)
		}
	}
	if _, err := Load(dir); err == nil {
		t.Error("loading a directory succeeded")
	}
	cf, err := Load(write(ConfDefaultName, testutil.TV1Config))
	if err != nil || cf.Path() != filepath.Join(dir, ConfDefaultName) {
		t.Fatalf("valid file: %v", err)
	}
}

func TestDecryptCorrupt(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*ConfFile)
		want   error
	}{
		{"flipped ciphertext byte", func(cf *ConfFile) { cf.EncryptedKey[20] ^= 1 }, ErrWrongPassword},
		{"flipped tag byte", func(cf *ConfFile) { cf.EncryptedKey[63] ^= 0x80 }, ErrWrongPassword},
		{"flipped nonce byte", func(cf *ConfFile) { cf.EncryptedKey[0] ^= 1 }, ErrWrongPassword},
		{"other salt", func(cf *ConfFile) { cf.ScryptObject.Salt[0] ^= 1 }, ErrWrongPassword},
		{"HKDF flag removed", func(cf *ConfFile) { cf.FeatureFlags = cf.FeatureFlags[1:] }, ErrCorruptKey},
		{"truncated key", func(cf *ConfFile) { cf.EncryptedKey = cf.EncryptedKey[:63] }, ErrCorruptKey},
		{"empty key", func(cf *ConfFile) { cf.EncryptedKey = nil }, ErrCorruptKey},
		{"zero nonce", func(cf *ConfFile) { clear(cf.EncryptedKey[:16]) }, ErrCorruptKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf := tv1Conf(t)
			c.mutate(cf)
			mk, err := cf.DecryptMasterKey([]byte("test"))
			if !errors.Is(err, c.want) || mk != nil {
				t.Fatalf("want %v, got %x, %v", c.want, mk, err)
			}
		})
	}
}
