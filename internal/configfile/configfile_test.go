package configfile

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seq returns the bytes from, from+1, …, from+n-1.
func seq(from byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = from + byte(i)
	}
	return b
}

// tv1Conf builds TV-1's config from its field values.
func tv1Conf(t testing.TB) *ConfFile {
	return &ConfFile{
		Creator:      "gocryptfs ref-1a03e99",
		EncryptedKey: mustB64(t, "HdhoRtHSTviqYGXpGKpVcYgKrPExiL/VxkuhX12tRWxxF3FPSQQo5iUCe7aFGd3yI/INU12Dn+LWoFPRkFJ/Jw=="),
		ScryptObject: ScryptParams{
			Salt: mustB64(t, "UsLgvZb3RjlEVoJiL+gMjFiDNONs75BodbnoVXfgWDE="),
			N:    1024, R: 8, P: 1, KeyLen: 32,
		},
		Version:      2,
		FeatureFlags: []FeatureFlag{FlagHKDF, FlagGCMIV128, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64},
	}
}

func TestTV1Layout(t *testing.T) {
	got, err := tv1Conf(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != testutil.TV1Config {
		t.Errorf("Marshal differs from the reference layout:\n%s\nwant:\n%s", got, testutil.TV1Config)
	}
	// Parse → Marshal must reproduce the file exactly.
	cf, err := Parse([]byte(testutil.TV1Config))
	if err != nil {
		t.Fatal(err)
	}
	got, err = cf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != testutil.TV1Config {
		t.Errorf("Parse+Marshal round trip differs:\n%s", got)
	}
}

func TestTV1Unwrap(t *testing.T) {
	cf, err := Parse([]byte(testutil.TV1Config))
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(cf.EncryptedKey) != "1dd86846d1d24ef8aa6065e918aa5571"+
		"880aacf13188bfd5c64ba15f5dad456c7117714f490428e625027bb68519ddf2"+
		"23f20d535d839fe2d6a053d190527f27" {
		t.Errorf("EncryptedKey decoded to %x", cf.EncryptedKey)
	}
	mk, err := cf.DecryptMasterKey([]byte("test"))
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(mk) != testutil.MasterKeyHex {
		t.Errorf("master key %x", mk)
	}
	if _, err := cf.DecryptMasterKey([]byte("wrong")); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("wrong password: got %v", err)
	}
}

// TestKEKIntermediates checks the scrypt output and the KEK of TV-1 and
// TV-2. Dropping the HKDF flag makes deriveKEK return the scrypt output.
func TestKEKIntermediates(t *testing.T) {
	tv2 := func(flags ...FeatureFlag) *ConfFile {
		return &ConfFile{
			ScryptObject: ScryptParams{Salt: seq(0x40, 32), N: 1024, R: 8, P: 1, KeyLen: 32},
			Version:      2, FeatureFlags: flags,
		}
	}
	tv1Legacy := tv1Conf(t)
	tv1Legacy.FeatureFlags = nil
	cases := []struct {
		name string
		cf   *ConfFile
		want string
	}{
		{"TV-1 scrypt", tv1Legacy, "4b988cba0705d622fc97cf52f44a91d85baed6b92c882f5c320a84188d713450"},
		{"TV-1 KEK", tv1Conf(t), "e627d57e62ce47610da0356b3bc195ce31f67e4b23e803c4a0fc10d19ba26e5c"},
		{"TV-2 scrypt", tv2(FlagGCMIV128), "b511a212d3d13355331881c5f67fa95cac7744d36e683ee7dbb8a6e2726217a0"},
		{"TV-2 KEK", tv2(FlagHKDF, FlagGCMIV128), "6f68cb9efaf97e015749cf4312f623bb69a2e56abd7e6eaf22f2f070fb75c99e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			slot := c.cf.Slots()[0]
			kek, err := c.cf.deriveKEK(&slot, []byte("test"), KDFMemoryCeiling)
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(kek) != c.want {
				t.Errorf("got %x, want %s", kek, c.want)
			}
		})
	}
}

func TestTV2(t *testing.T) {
	cases := []struct {
		name   string
		flags  []FeatureFlag
		nonce  []byte
		wantEK string
		wantB  string
	}{
		{
			name:   "a legacy",
			flags:  []FeatureFlag{FlagGCMIV128, FlagDirIV, FlagEMENames, FlagLongNames},
			nonce:  seq(0xa0, 12),
			wantEK: "a0a1a2a3a4a5a6a7a8a9aaab 71c78ab8c332ceaf178751d2a859b7518ce8dc30bf609bd2055a33305d18f899 4e1266307887c9f5cb35c4b0379230dc",
			wantB:  "oKGio6SlpqeoqaqrcceKuMMyzq8Xh1HSqFm3UYzo3DC/YJvSBVozMF0Y+JlOEmYweIfJ9cs1xLA3kjDc",
		},
		{
			name:   "b HKDF",
			flags:  []FeatureFlag{FlagHKDF, FlagGCMIV128, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64},
			nonce:  seq(0xb0, 16),
			wantEK: "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf ac487236fe541983851209569f5d69e293b91e74f40eb49a0a18e839fc6b6f51 ac0ba28a2526cf21e84a5e0b4cfcc359",
		},
	}
	mk := testutil.MasterKey()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf := &ConfFile{Version: 2, FeatureFlags: c.flags, ScryptObject: ScryptParams{N: 1024}}
			if err := cf.encryptMasterKey(mk, []byte("test"), 0, seq(0x40, 32), c.nonce); err != nil {
				t.Fatal(err)
			}
			if got, want := cf.EncryptedKey, testutil.MustHex(t, c.wantEK); !bytes.Equal(got, want) {
				t.Errorf("EncryptedKey %x\nwant         %x", got, want)
			}
			if c.wantB != "" && base64.StdEncoding.EncodeToString(cf.EncryptedKey) != c.wantB {
				t.Errorf("base64 %s", base64.StdEncoding.EncodeToString(cf.EncryptedKey))
			}
			if got := base64.StdEncoding.EncodeToString(cf.ScryptObject.Salt); got != "QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=" {
				t.Errorf("salt %s", got)
			}
			// The hand-built config must pass the loader and unwrap.
			data, err := cf.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := loaded.DecryptMasterKey([]byte("test"))
			if err != nil || !bytes.Equal(got, mk) {
				t.Fatalf("unwrap: %x, %v", got, err)
			}
			if _, err := loaded.DecryptMasterKey([]byte("wrong")); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("wrong password: %v", err)
			}
			if ErrWrongPassword.Error() != "Password incorrect." {
				t.Errorf("message %q", ErrWrongPassword)
			}
		})
	}
}

func TestInfo(t *testing.T) {
	cf, err := Parse([]byte(testutil.TV1Config))
	if err != nil {
		t.Fatal(err)
	}
	want := "Creator:           gocryptfs ref-1a03e99\n" +
		"FeatureFlags:      HKDF GCMIV128 DirIV EMENames LongNames Raw64\n" +
		"EncryptedKey:      64B\n" +
		"ScryptObject:      Salt=32B N=1024 R=8 P=1 KeyLen=32\n" +
		"contentEncryption: AES-GCM-256\n"
	if got := cf.Info(); got != want {
		t.Errorf("Info:\n%s\nwant:\n%s", got, want)
	}
}

func TestAccessors(t *testing.T) {
	cases := []struct {
		flags   []FeatureFlag
		lnm     uint8
		cipher  cryptocore.ContentCipher
		wantLNM int
	}{
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128}, 0, cryptocore.AESGCM, 255},
		{[]FeatureFlag{FlagHKDF, FlagXChaCha20Poly1305}, 0, cryptocore.XChaCha20Poly1305, 255},
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagAESSIV}, 0, cryptocore.AESSIV, 255},
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagLongNameMax}, 62, cryptocore.AESGCM, 62},
	}
	for _, c := range cases {
		cf := &ConfFile{FeatureFlags: c.flags, LongNameMax: c.lnm}
		if got := cf.ContentCipher(); got != c.cipher {
			t.Errorf("%v: cipher %v, want %v", c.flags, got, c.cipher)
		}
		if got := cf.EffectiveLongNameMax(); got != c.wantLNM {
			t.Errorf("%v: LongNameMax %d, want %d", c.flags, got, c.wantLNM)
		}
	}
	for _, f := range KnownFlags() {
		if !f.Known() {
			t.Errorf("%s not Known", f)
		}
	}
	if len(KnownFlags()) != 12 || FeatureFlag("hkdf").Known() {
		t.Error("flag knowledge wrong")
	}
	for n, want := range map[int]int{1024: 10, 65536: 16, 1 << 28: 28, 1500: 11, 1400: 10, 0: 0} {
		s := ScryptParams{N: n}
		if got := s.LogN(); got != want {
			t.Errorf("LogN(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestReferenceVectors loads every config of the reference vectors
// (vectors/README.md): mountable ones unwrap with "test" to the listed
// master key, v0.4–v0.6 are refused as too old.
func TestReferenceVectors(t *testing.T) {
	dir := testutil.VectorsDir(t)
	type vectorCase struct {
		vector string
		conf   string
		mk     string // empty: must be refused as too old
		cipher cryptocore.ContentCipher
	}
	var cases []vectorCase
	for _, n := range testutil.TooOldVectors() {
		cases = append(cases, vectorCase{n, ConfDefaultName, "", 0})
	}
	for _, v := range testutil.AllVectors() {
		cases = append(cases, vectorCase{v.Name, v.ConfigName(), v.MasterKey, cryptocore.ContentCipher(v.Cipher)})
	}
	for _, c := range cases {
		t.Run(c.vector, func(t *testing.T) {
			path := filepath.Join(dir, c.vector, c.conf)
			cf, err := Load(path)
			if c.mk == "" {
				if !errors.Is(err, ErrTooOld) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("want a too-old error, got %v", err)
				}
				var ve *ValidationError
				if !errors.As(err, &ve) || ve.Rule != RuleGCMNeedsGCMIV128 {
					t.Fatalf("want rule 7, got %#v", err)
				}
				if !strings.Contains(err.Error(), "v0.6 or older") || !strings.Contains(err.Error(), "older gocryptfs version") {
					t.Errorf("message does not explain: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cf.Path() != path {
				t.Errorf("Path() = %q", cf.Path())
			}
			if got := cf.ContentCipher(); got != c.cipher {
				t.Errorf("cipher %v, want %v", got, c.cipher)
			}
			mk, err := cf.DecryptMasterKey([]byte("test"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mk, testutil.MustHex(t, c.mk)) {
				t.Errorf("master key %x", mk)
			}
		})
	}
}
