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
// summarize and (when the KDFs are cheap) to unwrap, through every key
// slot.
func FuzzParse(f *testing.F) {
	for _, seed := range slotSeeds(f) {
		f.Add(seed)
	}
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
		slots := cf.Slots()
		if len(slots) == 0 || len(slots) > MaxKeySlots {
			t.Fatalf("%d slots", len(slots))
		}
		cheap := len(slots) <= 4
		for i := range slots {
			_ = slots[i].Describe()
			cheap = cheap && cheapSlot(&slots[i])
		}
		if !cheap {
			return
		}
		if mk, err := cf.DecryptMasterKey([]byte("test")); err == nil && len(mk) != 32 {
			t.Fatalf("master key of %d bytes", len(mk))
		}
		for _, kind := range []SlotKind{SlotPassword, SlotKeyFile, SlotFIDO2} {
			mk, i, err := cf.Unlock(kind, func(int, *KeySlot) ([]byte, error) { return []byte("test"), nil })
			if err == nil && (len(mk) != 32 || slots[i].Kind != kind) {
				t.Fatalf("Unlock(%s): %d-byte key from slot %d", kind, len(mk), i)
			}
		}
	})
}

// cheapSlot reports whether unwrapping s costs little enough for fuzzing.
func cheapSlot(s *KeySlot) bool {
	if p := s.Scrypt; p != nil && (p.N > 2048 || p.R > 16 || p.P > 2) {
		return false
	}
	if p := s.Argon2id; p != nil && (p.Memory > 2*Argon2idMinMemory || p.Time > 2 || p.Threads > 4) {
		return false
	}
	return true
}

// slotSeeds returns configs using the key-slot fields: extra slots of every
// kind and KDF, and a FlagKeySlots config, all with password "test".
func slotSeeds(f *testing.F) [][]byte {
	cheapA := &Argon2idParams{Time: 1, Memory: Argon2idMinMemory, Threads: 1}
	cf, mk, err := Create(CreateArgs{Password: []byte("test"), LogN: ScryptMinLogN, Slot: &SlotSpec{Label: "first"}})
	if err != nil {
		f.Fatal(err)
	}
	specs := []SlotSpec{
		{Kind: SlotPassword, Argon2id: cheapA, Label: "argon"},
		{Kind: SlotKeyFile, ScryptLogN: ScryptMinLogN},
		{Kind: SlotFIDO2, ScryptLogN: ScryptMinLogN, FIDO2: &FIDO2Params{CredentialID: []byte("c"), HMACSalt: []byte("s")}},
	}
	for _, s := range specs {
		if _, err := cf.AddSlot(mk, []byte("test"), s); err != nil {
			f.Fatal(err)
		}
	}
	multi, _ := cf.Marshal()
	// A slot with a value of the wrong JSON type (kept, unusable).
	broken := bytes.Replace(multi, []byte(`"Label": "argon"`), []byte(`"Label": 7`), 1)
	if err := cf.RemoveSlot(0); err != nil {
		f.Fatal(err)
	}
	flagged, _ := cf.Marshal()
	return [][]byte{multi, broken, flagged}
}
