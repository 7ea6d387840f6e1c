package configfile

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// tamperedFirst returns a config whose slot 0 (reference fields, password
// "test") has had its scrypt costs changed by tamper, followed by a good
// slot 1 with password "good", and the master key.
func tamperedFirst(t *testing.T, tamper func(*ScryptParams)) (*ConfFile, []byte) {
	t.Helper()
	cf, mk := newSlotConf(t)
	if _, err := cf.AddSlot(mk, []byte("good"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	tamper(&cf.ScryptObject)
	return reparse(t, cf), mk
}

// allocatedBy returns the bytes f allocated on the heap.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestKDFBudgetSkipsTamperedSlot: a slot 0 whose scrypt costs were raised
// by whoever holds the storage (N = 2^28: 256 GiB; R·P = 2^29: 64 GiB of
// P blocks; N·R·P far beyond -scryptn 28's work) is refused before its KDF
// allocates anything, reported through Skipped, and the good slot after it
// still opens. Before the budget, the first two ran scrypt and the
// process died out of memory.
func TestKDFBudgetSkipsTamperedSlot(t *testing.T) {
	const budget = 1 << 30
	cases := map[string]func(*ScryptParams){
		"N=2^28":        func(p *ScryptParams) { p.N = 1 << 28 },
		"R*P=2^29":      func(p *ScryptParams) { p.P = 1 << 26 },
		"work N*R*P":    func(p *ScryptParams) { p.N, p.P = 1<<15, 1<<17 },
		"R=2^20 N=2^10": func(p *ScryptParams) { p.R = 1 << 20 },
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			cf, mk := tamperedFirst(t, tamper)
			var skipped []int
			var skipErr error
			var got []byte
			var slot int
			var err error
			alloc := allocatedBy(func() {
				got, slot, err = cf.unlockWithin(SlotPassword, same("good"), UnlockOptions{
					Skipped: func(i int, e error) { skipped = append(skipped, i); skipErr = e },
				}, budget)
			})
			if err != nil || slot != 1 || !bytes.Equal(got, mk) {
				t.Fatalf("UnlockWith: slot %d, %v", slot, err)
			}
			if len(skipped) != 1 || skipped[0] != 0 || !errors.Is(skipErr, ErrKDFBudget) {
				t.Fatalf("skipped %v: %v, want slot 0 over budget", skipped, skipErr)
			}
			t.Logf("slot 0: %v", skipErr)
			// Slot 1 (N = 1024) needs about 1 MiB.
			if alloc > 16<<20 {
				t.Errorf("unlock allocated %d bytes", alloc)
			}
			// Alone, the tampered slot gives the budget error (exit 13
			// on the command line), still without running its KDF.
			if _, _, err := cf.unlockWithin(SlotPassword, same("test"), UnlockOptions{}, budget); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("with slot 0's password: %v, want wrong password (slot 1 tried, slot 0 skipped)", err)
			}
			if _, err := cf.DecryptMasterKey([]byte("test")); !errors.Is(err, ErrKDFBudget) {
				t.Errorf("DecryptMasterKey: %v, want ErrKDFBudget", err)
			}
		})
	}
}

// TestKDFBudgetArgon2id: an Argon2id slot whose memory was raised above
// the budget is skipped; the next slot opens.
func TestKDFBudgetArgon2id(t *testing.T) {
	cf, mk := newSlotConf(t)
	if _, err := cf.AddSlot(mk, []byte("good"), SlotSpec{Kind: SlotPassword, Argon2id: &cheapArgon2id}); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.AddSlot(mk, []byte("good"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	cf.KeySlots[0].Argon2id.Memory = Argon2idMaxMemory
	cf = reparse(t, cf)
	var skipErr error
	var slot int
	var err error
	alloc := allocatedBy(func() {
		_, slot, err = cf.unlockWithin(SlotPassword, same("good"), UnlockOptions{Skipped: func(_ int, e error) { skipErr = e }}, 1<<30)
	})
	if err != nil || slot != 2 || !errors.Is(skipErr, ErrKDFBudget) {
		t.Fatalf("slot %d, %v; skipped: %v", slot, err, skipErr)
	}
	if alloc > 16<<20 {
		t.Errorf("unlock allocated %d bytes", alloc)
	}
}

// TestKDFBudgetCreate: a slot this machine could not open is not
// created, with the parameter error the command line maps to exit 13.
func TestKDFBudgetCreate(t *testing.T) {
	cf, mk := newSlotConf(t)
	s := KeySlot{Kind: SlotPassword, KDF: KDFScrypt, Scrypt: &ScryptParams{N: 1 << ScryptMaxLogN, R: ScryptR, P: ScryptP}}
	if DefaultKDFMemoryBudget() >= s.KDFMemory() {
		t.Logf("this machine's budget admits -scryptn %d; nothing to refuse", ScryptMaxLogN)
		return
	}
	_, err := cf.AddSlot(mk, []byte("x"), SlotSpec{Kind: SlotPassword, ScryptLogN: ScryptMaxLogN})
	if !errors.Is(err, ErrScryptParams) || !errors.Is(err, ErrKDFBudget) {
		t.Fatalf("AddSlot -scryptn %d: %v", ScryptMaxLogN, err)
	}
	if len(cf.Slots()) != 1 {
		t.Fatal("slot added anyway")
	}
}

// TestKDFMemoryFormula: KDFMemory is what x/crypto/scrypt allocates for
// the default costs (128·R·N for V, 128·R·P for B, 256·R scratch).
func TestKDFMemoryFormula(t *testing.T) {
	s := KeySlot{KDF: KDFScrypt, Scrypt: &ScryptParams{N: 1 << 16, R: 8, P: 1}}
	if got, want := s.KDFMemory(), uint64(128*8*(1<<16)+128*8+256*8); got != want {
		t.Fatalf("KDFMemory %d, want %d", got, want)
	}
}
