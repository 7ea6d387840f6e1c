package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// fuzzBudget is the KDF memory budget FuzzKeySlots unlocks with: room for
// the seeds' costs (scrypt N=1024: 1 MiB, Argon2id 8 MiB) and for costs
// the fuzzer raises a little; everything above is refused unrun.
const fuzzBudget = 64 << 20

// keySlotsBase returns a config with password "test" in slot 0 (the
// reference's fields), an Argon2id slot with another password, a
// slot-format scrypt slot with "test", a key-file slot with the bytes
// "test", and the master key.
func keySlotsBase(f *testing.F) ([]byte, []byte) {
	cf, mk, err := Create(CreateArgs{Password: []byte("test"), LogN: ScryptMinLogN, Slot: &SlotSpec{Label: "first"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		secret string
		spec   SlotSpec
	}{
		{"other", SlotSpec{Kind: SlotPassword, Argon2id: &Argon2idParams{Time: 1, Memory: Argon2idMinMemory, Threads: 1}, Label: "argon"}},
		{"test", SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN, Label: "second"}},
		{"test", SlotSpec{Kind: SlotKeyFile, ScryptLogN: ScryptMinLogN}},
	} {
		if _, err := cf.AddSlot(mk, []byte(s.secret), s.spec); err != nil {
			f.Fatal(err)
		}
	}
	b, err := cf.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	return b, mk
}

// mutateSlots changes one thing in the JSON config m: field selects what,
// slot which slot (0 is the reference's fields, 1.. the KeySlots
// entries), num, str and raw are the new value.
func mutateSlots(m map[string]any, slot, field uint8, num int64, str string, raw []byte) {
	slots, _ := m["KeySlots"].([]any)
	var s map[string]any // the slot's object, nil for slot 0
	if i := int(slot) % (len(slots) + 1); i > 0 {
		s, _ = slots[i-1].(map[string]any)
	}
	obj := func(key string) map[string]any {
		if s == nil {
			o, _ := m["ScryptObject"].(map[string]any)
			return o
		}
		o, _ := s[key].(map[string]any)
		return o
	}
	set := func(o map[string]any, k string, v any) {
		if o != nil {
			o[k] = v
		}
	}
	switch field % 16 {
	case 0:
		set(obj("Scrypt"), "N", num)
	case 1:
		set(obj("Scrypt"), "R", num)
	case 2:
		set(obj("Scrypt"), "P", num)
	case 3:
		set(obj("Scrypt"), "Salt", raw)
	case 4:
		set(obj("Argon2id"), "Memory", num)
	case 5:
		set(obj("Argon2id"), "Time", num)
	case 6:
		set(obj("Argon2id"), "Threads", num)
	case 7:
		set(s, "Kind", str)
	case 8:
		set(s, "KDF", str)
	case 9:
		set(s, "Label", str)
	case 10:
		if s == nil {
			m["EncryptedKey"] = raw
		} else {
			s["EncryptedKey"] = raw
		}
	case 11: // swap two extra slots
		if len(slots) > 1 {
			i, j := int(slot)%len(slots), int(num&0xff)%len(slots)
			slots[i], slots[j] = slots[j], slots[i]
		}
	case 12: // remove an extra slot
		if len(slots) > 0 {
			i := int(slot) % len(slots)
			m["KeySlots"] = append(slots[:i:i], slots[i+1:]...)
		}
	case 13: // a slot replaced by arbitrary JSON
		if len(slots) > 0 {
			slots[int(slot)%len(slots)] = json.RawMessage(raw)
		}
	case 14:
		flags, _ := m["FeatureFlags"].([]any)
		m["FeatureFlags"] = append(flags, str)
	case 15: // copy one slot over another (a duplicated slot)
		if len(slots) > 1 {
			slots[int(slot)%len(slots)] = slots[int(num&0xff)%len(slots)]
		}
	}
}

// FuzzKeySlots mutates one field of a valid four-slot config (a slot's
// KDF costs, salt, kind, KDF, label, wrapped key; slot order, removal,
// duplication, arbitrary JSON; feature flags) and unlocks it with the
// fixed secret "test" under a 64 MiB KDF budget. It must never panic,
// never return a key other than the master key, never allocate much more
// than the budget per slot, and refuse every over-budget slot unrun.
// FuzzParse covers arbitrary bytes; this target reaches the unlocking
// code with configs that parse.
func FuzzKeySlots(f *testing.F) {
	base, mk := keySlotsBase(f)
	f.Add(uint8(0), uint8(0), int64(1<<28), "", []byte(nil))
	f.Add(uint8(0), uint8(2), int64(1<<26), "", []byte(nil))
	f.Add(uint8(2), uint8(4), int64(Argon2idMaxMemory), "", []byte(nil))
	f.Add(uint8(1), uint8(1), int64(1<<20), "", []byte(nil))
	f.Add(uint8(0), uint8(10), int64(0), "", []byte("short"))
	f.Add(uint8(1), uint8(7), int64(0), "keyfile", []byte(nil))
	f.Add(uint8(2), uint8(8), int64(0), "argon2id", []byte(nil))
	f.Add(uint8(1), uint8(9), int64(0), "evil", []byte(nil))
	f.Add(uint8(0), uint8(11), int64(2), "", []byte(nil))
	f.Add(uint8(0), uint8(12), int64(0), "", []byte(nil))
	f.Add(uint8(1), uint8(13), int64(0), "", []byte(`{"Kind":"password","KDF":"scrypt","Scrypt":{"N":1024}}`))
	f.Add(uint8(0), uint8(14), int64(0), "KeySlots", []byte(nil))
	f.Add(uint8(0), uint8(15), int64(1), "", []byte(nil))
	f.Fuzz(func(t *testing.T, slot, field uint8, num int64, str string, raw []byte) {
		var m map[string]any
		if err := json.Unmarshal(base, &m); err != nil {
			t.Fatal(err)
		}
		mutateSlots(m, slot, field, num, str, raw)
		data, err := json.Marshal(m)
		if err != nil {
			return // e.g. invalid JSON in a RawMessage
		}
		cf, err := Parse(data)
		if err != nil {
			return
		}
		slots := cf.Slots()
		for i := range slots {
			_ = slots[i].Describe()
			s := &slots[i]
			if s.Validate() != nil || s.checkKDFBudget(fuzzBudget) != nil {
				continue // refused unrun below
			}
			// Within the budget but too slow for fuzzing.
			if p := s.Scrypt; p != nil && uint64(p.N)*uint64(p.R)*uint64(p.P) > 1<<16 {
				return
			}
			if a := s.Argon2id; a != nil && a.Time*a.Memory > 2*Argon2idMinMemory {
				return
			}
		}
		for _, kind := range []SlotKind{SlotPassword, SlotKeyFile, SlotFIDO2} {
			var got []byte
			var i int
			var err error
			alloc := allocatedBy(func() {
				got, i, err = cf.unlockWithin(kind, same("test"), UnlockOptions{
					Skipped: func(i int, err error) {
						if slots[i].Validate() == nil && !errors.Is(err, ErrKDFBudget) {
							t.Fatalf("slot %d skipped for %v", i, err)
						}
					},
				}, fuzzBudget)
			})
			if err == nil && (!bytes.Equal(got, mk) || slots[i].Kind != kind) {
				t.Fatalf("Unlock(%s) gave a wrong key from slot %d", kind, i)
			}
			if limit := uint64(len(slots))*fuzzBudget + 16<<20; alloc > limit {
				t.Fatalf("Unlock(%s) allocated %d bytes, more than %d", kind, alloc, limit)
			}
		}
	})
}
