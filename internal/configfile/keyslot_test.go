package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cheapArgon2id are the smallest accepted Argon2id costs, for fast tests.
var cheapArgon2id = Argon2idParams{Time: Argon2idMinTime, Memory: Argon2idMinMemory, Threads: 1}

// newSlotConf creates a config with password "test" in slot 0 (scrypt,
// cheapest N) and returns it with its master key.
func newSlotConf(t *testing.T) (*ConfFile, []byte) {
	t.Helper()
	cf, mk, err := Create(CreateArgs{Path: filepath.Join(t.TempDir(), ConfDefaultName), Password: []byte("test"), LogN: ScryptMinLogN, Creator: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return cf, mk
}

// same returns a SecretFunc that always gives secret.
func same(secret string) SecretFunc {
	return func(int, *KeySlot) ([]byte, error) { return []byte(secret), nil }
}

// mustUnlock unlocks with kind/secret and checks the key and slot index.
func mustUnlock(t *testing.T, cf *ConfFile, kind SlotKind, secret string, mk []byte, wantSlot int) {
	t.Helper()
	got, i, err := cf.Unlock(kind, same(secret))
	if err != nil {
		t.Fatalf("Unlock(%s, %q): %v", kind, secret, err)
	}
	if !bytes.Equal(got, mk) || i != wantSlot {
		t.Fatalf("Unlock(%s, %q): slot %d (want %d), key match %v", kind, secret, i, wantSlot, bytes.Equal(got, mk))
	}
}

// reparse writes cf to JSON and parses it back, as a reader would see it.
func reparse(t *testing.T, cf *ConfFile) *ConfFile {
	t.Helper()
	b, err := cf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cf2, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, b)
	}
	cf2.SetPath(cf.Path())
	return cf2
}

func TestSlotsAddUnlock(t *testing.T) {
	cf, mk := newSlotConf(t)
	if cf.hasSlotData() || strings.Contains(cf.Info(), "KeySlots") {
		t.Fatal("a plain config reports key-slot data")
	}
	if _, err := cf.AddSlot(mk, []byte("second"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN, Label: "partner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.AddSlot(mk, []byte("argon"), SlotSpec{Kind: SlotPassword, Argon2id: &cheapArgon2id}); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.AddSlot(mk, []byte("key file bytes\x00\xff"), SlotSpec{Kind: SlotKeyFile, ScryptLogN: ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if cf.IsFeatureFlagSet(FlagKeySlots) || len(cf.KeySlots) != 3 {
		t.Fatalf("layout: flags %v, %d extra slots", cf.FeatureFlags, len(cf.KeySlots))
	}
	mustUnlock(t, cf, SlotPassword, "test", mk, 0)
	mustUnlock(t, cf, SlotPassword, "second", mk, 1)
	mustUnlock(t, cf, SlotPassword, "argon", mk, 2)
	mustUnlock(t, cf, SlotKeyFile, "key file bytes\x00\xff", mk, 3)
	// The reference's view: slot 0 alone, through DecryptMasterKey.
	if got, err := cf.DecryptMasterKey([]byte("test")); err != nil || !bytes.Equal(got, mk) {
		t.Fatalf("DecryptMasterKey: %v", err)
	}
	// A password never opens a key-file slot and vice versa.
	if _, _, err := cf.Unlock(SlotPassword, same("key file bytes\x00\xff")); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("key file as password: %v", err)
	}
	if _, _, err := cf.Unlock(SlotKeyFile, same("test")); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("password as key file: %v", err)
	}
	if _, _, err := cf.Unlock(SlotFIDO2, same("test")); !errors.Is(err, ErrNoSlot) {
		t.Errorf("no fido2 slot: %v", err)
	}
	info := cf.Info()
	for _, w := range []string{"KeySlots:          4\n", "  slot 0:          password scrypt N=1024 R=8 P=1 created=unknown (reference-compatible)\n",
		`slot 1:          password scrypt N=1024 R=8 P=1 label="partner" created=`, "slot 2:          password argon2id t=1 m=8192KiB p=1 created=",
		"slot 3:          keyfile scrypt"} {
		if !strings.Contains(info, w) {
			t.Errorf("Info lacks %q:\n%s", w, info)
		}
	}
}

func TestSlotsFIDO2(t *testing.T) {
	cf, mk := newSlotConf(t)
	tokens := map[string]string{"credA": "secretA", "credB": "secretB"}
	for cred := range tokens {
		spec := SlotSpec{Kind: SlotFIDO2, ScryptLogN: ScryptMinLogN, FIDO2: &FIDO2Params{CredentialID: []byte(cred), HMACSalt: []byte("salt")}}
		if _, err := cf.AddSlot(mk, []byte(tokens[cred]), spec); err != nil {
			t.Fatal(err)
		}
	}
	cf = reparse(t, cf)
	// A token answers only for its own credential, like a real one.
	token := func(name string) SecretFunc {
		return func(i int, s *KeySlot) ([]byte, error) {
			if string(s.FIDO2.CredentialID) != name {
				return nil, errors.New("no credential")
			}
			return []byte(tokens[name]), nil
		}
	}
	for _, name := range []string{"credA", "credB"} {
		got, slot, err := cf.Unlock(SlotFIDO2, token(name))
		if err != nil || !bytes.Equal(got, mk) || string(cf.Slots()[slot].FIDO2.CredentialID) != name {
			t.Errorf("token %s: slot %d, %v", name, slot, err)
		}
	}
	// An unknown token: every assertion fails, the token's error comes back.
	if _, _, err := cf.Unlock(SlotFIDO2, token("credC")); err == nil || errors.Is(err, ErrWrongPassword) {
		t.Errorf("unknown token: %v", err)
	}
}

func TestSlotsRemoveFirstAndPasswd(t *testing.T) {
	cf, mk := newSlotConf(t)
	if err := cf.RemoveSlot(0); !errors.Is(err, ErrLastSlot) {
		t.Fatalf("removing the only slot: %v", err)
	}
	cf.AddSlot(mk, []byte("second"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN, Label: "two"})
	cf.AddSlot(mk, []byte("third"), SlotSpec{Kind: SlotPassword, Argon2id: &cheapArgon2id})
	if err := cf.RemoveSlot(0); err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	// The new first slot is slot-format: flag set, reference fields empty.
	if !cf.IsFeatureFlagSet(FlagKeySlots) || len(cf.EncryptedKey) != 0 || len(cf.KeySlots) != 2 || !allZero(cf.ScryptObject.Salt) {
		t.Fatalf("after removing slot 0: flags %v, EncryptedKey %d bytes, %d slots", cf.FeatureFlags, len(cf.EncryptedKey), len(cf.KeySlots))
	}
	if _, _, err := cf.Unlock(SlotPassword, same("test")); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("removed password still opens: %v", err)
	}
	mustUnlock(t, cf, SlotPassword, "second", mk, 0)
	mustUnlock(t, cf, SlotPassword, "third", mk, 1)
	created := cf.Slots()[0].Created
	// -passwd on the first slot with scrypt moves it back into the
	// reference's fields and clears the flag; label and date are kept.
	if err := cf.ReplaceSlot(0, mk, []byte("new2"), SlotSpec{Kind: SlotPassword}); err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if cf.IsFeatureFlagSet(FlagKeySlots) || len(cf.KeySlots) != 1 || cf.FirstKeySlot == nil || cf.FirstKeySlot.Label != "two" || cf.FirstKeySlot.Created != created {
		t.Fatalf("after -passwd on slot 0: flags %v, %d extra slots, first %+v", cf.FeatureFlags, len(cf.KeySlots), cf.FirstKeySlot)
	}
	if got, err := cf.DecryptMasterKey([]byte("new2")); err != nil || !bytes.Equal(got, mk) {
		t.Fatalf("reference view after -passwd: %v", err)
	}
	// -passwd on an Argon2id slot keeps Argon2id and its costs.
	if err := cf.ReplaceSlot(1, mk, []byte("new3"), SlotSpec{Kind: SlotPassword}); err != nil {
		t.Fatal(err)
	}
	s := cf.Slots()[1]
	if s.KDF != KDFArgon2id || s.Argon2id.Memory != cheapArgon2id.Memory {
		t.Errorf("slot 1 after -passwd: %s", s.Describe())
	}
	mustUnlock(t, cf, SlotPassword, "new2", mk, 0)
	mustUnlock(t, cf, SlotPassword, "new3", mk, 1)
	// Argon2id for slot 0 needs the flag again.
	if err := cf.ReplaceSlot(0, mk, []byte("a0"), SlotSpec{Kind: SlotPassword, Argon2id: &cheapArgon2id}); err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if !cf.IsFeatureFlagSet(FlagKeySlots) || cf.FirstKeySlot != nil {
		t.Fatalf("Argon2id first slot without the flag: %v", cf.FeatureFlags)
	}
	mustUnlock(t, cf, SlotPassword, "a0", mk, 0)
}

// TestSlotsTamper changes one slot's fields and checks that only that slot
// stops opening.
func TestSlotsTamper(t *testing.T) {
	cf, mk := newSlotConf(t)
	for _, pw := range []string{"one", "two"} {
		if _, err := cf.AddSlot(mk, []byte(pw), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN, Label: pw}); err != nil {
			t.Fatal(err)
		}
	}
	good, err := cf.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(s *KeySlot)
		// invalid: the slot is refused without a KDF run.
		invalid bool
	}{
		{"label", func(s *KeySlot) { s.Label = "evil" }, false},
		{"created", func(s *KeySlot) { s.Created = time.Time{}.Format(time.RFC3339) }, false},
		{"wrapped key", func(s *KeySlot) { s.EncryptedKey[20] ^= 1 }, false},
		{"nonce", func(s *KeySlot) { s.EncryptedKey[0] ^= 1 }, false},
		{"salt", func(s *KeySlot) { s.Scrypt.Salt[0] ^= 1 }, false},
		{"short key", func(s *KeySlot) { s.EncryptedKey = s.EncryptedKey[:40] }, false},
		{"kind", func(s *KeySlot) { s.Kind = SlotKeyFile }, false},
		{"weak scrypt", func(s *KeySlot) { s.Scrypt.N = 512 }, true},
		{"unknown kdf", func(s *KeySlot) { s.KDF = "pbkdf2" }, true},
		{"weak argon2id", func(s *KeySlot) {
			s.KDF, s.Scrypt = KDFArgon2id, nil
			s.Argon2id = &Argon2idParams{Salt: make([]byte, 32), Time: 1, Memory: 64, Threads: 1, KeyLen: 32}
		}, true},
		{"huge argon2id", func(s *KeySlot) {
			s.KDF, s.Scrypt = KDFArgon2id, nil
			s.Argon2id = &Argon2idParams{Salt: make([]byte, 32), Time: 1, Memory: 1 << 30, Threads: 1, KeyLen: 32}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf, err := Parse(good)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(&cf.KeySlots[0]) // slot 1, password "one"
			cf = reparse(t, cf)
			if _, _, err := cf.Unlock(SlotPassword, same("one")); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("tampered slot: %v", err)
			}
			mustUnlock(t, cf, SlotPassword, "test", mk, 0)
			mustUnlock(t, cf, SlotPassword, "two", mk, 2)
			if c.invalid != strings.Contains(cf.Info(), "UNUSABLE") {
				t.Errorf("Info:\n%s", cf.Info())
			}
		})
	}
	// A slot whose JSON has wrong types is kept, written back as it was and
	// unusable; the config still loads and the other slots open.
	broken := bytes.Replace(good, []byte(`"Label": "one"`), []byte(`"Label": 1, "KDF": ["x"]`), 1)
	if bytes.Equal(broken, good) {
		t.Fatal("test setup: label not found")
	}
	cfb, err := Parse(broken)
	if err != nil {
		t.Fatalf("config with a broken slot refused: %v", err)
	}
	if _, _, err := cfb.Unlock(SlotPassword, same("one")); !errors.Is(err, ErrWrongPassword) {
		t.Errorf("broken slot: %v", err)
	}
	mustUnlock(t, cfb, SlotPassword, "two", mk, 2)
	if !strings.Contains(cfb.Info(), "slot 1:          ") || !strings.Contains(cfb.Info(), "UNUSABLE: key slot cannot be decoded") {
		t.Errorf("Info:\n%s", cfb.Info())
	}
	if _, err := cfb.AddSlot(mk, []byte("three"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	out, _ := cfb.Marshal()
	if !bytes.Contains(out, []byte(`"KDF": [`)) {
		t.Errorf("broken slot not written back:\n%s", out)
	}
	mustUnlock(t, reparse(t, cfb), SlotPassword, "three", mk, 3)

	// Slot 0 in the reference's fields damaged: the extra slots still open.
	for name, edit := range map[string]func(cf *ConfFile){
		"flipped": func(cf *ConfFile) { cf.EncryptedKey[40] ^= 1 },
		"short":   func(cf *ConfFile) { cf.EncryptedKey = cf.EncryptedKey[:10] },
		"salt":    func(cf *ConfFile) { cf.ScryptObject.Salt[3] ^= 1 },
	} {
		cf, err := Parse(good)
		if err != nil {
			t.Fatal(err)
		}
		edit(cf)
		cf = reparse(t, cf)
		if _, _, err := cf.Unlock(SlotPassword, same("test")); !errors.Is(err, ErrWrongPassword) {
			t.Errorf("slot 0 %s: %v", name, err)
		}
		mustUnlock(t, cf, SlotPassword, "one", mk, 1)
		mustUnlock(t, cf, SlotPassword, "two", mk, 2)
	}
	// Weak parameters in the only slot of a kind: the slot's validation
	// error (exit 27 on the command line), no KDF run.
	cf2, _ := Parse(good)
	cf2.KeySlots[0].Kind = SlotKeyFile
	cf2.KeySlots[0].Scrypt.N = 2
	called := false
	_, _, err = cf2.Unlock(SlotKeyFile, func(int, *KeySlot) ([]byte, error) { called = true; return nil, nil })
	if !errors.Is(err, ErrInvalid) || called {
		t.Errorf("weak only slot: %v (secret asked: %v)", err, called)
	}
}

func TestSlotsLayoutValidation(t *testing.T) {
	cf, mk := newSlotConf(t)
	cf.AddSlot(mk, []byte("x"), SlotSpec{Kind: SlotPassword, Argon2id: &cheapArgon2id})
	cf.RemoveSlot(0)
	good, _ := cf.Marshal()
	edits := map[string]func(m map[string]any){
		"flag without slots":      func(m map[string]any) { delete(m, "KeySlots") },
		"flag with EncryptedKey":  func(m map[string]any) { m["EncryptedKey"] = "AAAA" },
		"flag with FirstKeySlot":  func(m map[string]any) { m["FirstKeySlot"] = map[string]any{"Label": "x"} },
		"flag with FIDO2 flag":    func(m map[string]any) { m["FeatureFlags"] = append(m["FeatureFlags"].([]any), "FIDO2") },
		"too many slots":          func(m map[string]any) { m["KeySlots"] = make([]any, MaxKeySlots+1) },
		"flag with FIDO2 object":  func(m map[string]any) { m["FIDO2"] = map[string]any{"CredentialID": "AA==", "HMACSalt": "AA=="} },
		"placeholder scrypt weak": func(m map[string]any) { m["ScryptObject"].(map[string]any)["N"] = 2 },
	}
	for name, edit := range edits {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		if _, err := Parse(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The unmodified flagged config is valid; its slot opens.
	cf2, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	mustUnlock(t, cf2, SlotPassword, "x", mk, 0)
	if _, err := cf2.DecryptMasterKey([]byte("x")); err != nil {
		t.Errorf("DecryptMasterKey opens slot 0 of a flagged config: %v", err)
	}
	if err := cf2.EncryptMasterKey(mk, []byte("y"), 0); err == nil {
		t.Error("EncryptMasterKey on a flagged config")
	}
}

func TestSlotsCreate(t *testing.T) {
	dir := t.TempDir()
	// -init -argon2id: the only slot is Argon2id, so the flag is set.
	cf, mk, err := Create(CreateArgs{Path: filepath.Join(dir, "a.conf"), Password: []byte("pw"), Slot: &SlotSpec{Argon2id: &cheapArgon2id, Label: "L"}})
	if err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if !cf.IsFeatureFlagSet(FlagKeySlots) || cf.KeySlots[0].Label != "L" || cf.KeySlots[0].Created == "" {
		t.Fatalf("argon2id init: %v %+v", cf.FeatureFlags, cf.KeySlots)
	}
	mustUnlock(t, cf, SlotPassword, "pw", mk, 0)
	// -init -label with scrypt stays reference-compatible.
	cf, mk, err = Create(CreateArgs{Path: filepath.Join(dir, "b.conf"), Password: []byte("pw"), LogN: ScryptMinLogN, Slot: &SlotSpec{Label: "L"}})
	if err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if cf.IsFeatureFlagSet(FlagKeySlots) || cf.FirstKeySlot == nil || cf.FirstKeySlot.Label != "L" || cf.ScryptObject.N != 1<<ScryptMinLogN {
		t.Fatalf("labelled init: %v %+v", cf.FeatureFlags, cf.FirstKeySlot)
	}
	if got, err := cf.DecryptMasterKey([]byte("pw")); err != nil || !bytes.Equal(got, mk) {
		t.Fatal(err)
	}
	// -init -fido2 -argon2id: a FIDO2 slot in KeySlots, no FIDO2 flag.
	fido := &FIDO2Params{CredentialID: []byte("c"), HMACSalt: []byte("s")}
	cf, mk, err = Create(CreateArgs{Password: []byte("hmac"), FIDO2: fido, Slot: &SlotSpec{Argon2id: &cheapArgon2id}})
	if err != nil {
		t.Fatal(err)
	}
	cf = reparse(t, cf)
	if !cf.IsFeatureFlagSet(FlagKeySlots) || cf.IsFeatureFlagSet(FlagFIDO2) || cf.FIDO2 != nil || cf.KeySlots[0].Kind != SlotFIDO2 {
		t.Fatalf("fido2 argon2id init: %v %+v", cf.FeatureFlags, cf.KeySlots)
	}
	mustUnlock(t, cf, SlotFIDO2, "hmac", mk, 0)
	if !strings.Contains(cf.Info(), "ScryptObject:      unused placeholder") {
		t.Errorf("Info:\n%s", cf.Info())
	}
	// Costs out of range are refused before anything is wrapped.
	weak := Argon2idParams{Time: 1, Memory: 1024, Threads: 1}
	if _, _, err := Create(CreateArgs{Password: []byte("pw"), Slot: &SlotSpec{Argon2id: &weak}}); !errors.Is(err, ErrArgon2idParams) {
		t.Errorf("weak argon2id at init: %v", err)
	}
	if err := CheckArgon2idCosts(weak); !errors.Is(err, ErrArgon2idParams) {
		t.Errorf("CheckArgon2idCosts: %v", err)
	}
	if err := CheckArgon2idCosts(DefaultArgon2idParams()); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

func TestSlotsLimit(t *testing.T) {
	cf, mk := newSlotConf(t)
	for i := 1; i < MaxKeySlots; i++ {
		if _, err := cf.AddSlot(mk, []byte("x"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cf.AddSlot(mk, []byte("x"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN}); !errors.Is(err, ErrTooManySlots) {
		t.Errorf("slot %d: %v", MaxKeySlots+1, err)
	}
	reparse(t, cf)
	// One more in the JSON is refused when loading.
	cf.KeySlots = append(cf.KeySlots, cf.KeySlots[0])
	if err := cf.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("%d slots accepted: %v", MaxKeySlots+1, err)
	}
}
