package configfile

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestKDFBudgetDefault: this machine's budget admits the default costs of
// both KDFs, is at most three quarters of the physical memory and at most
// KDFMemoryCeiling; where it is below 256 GiB (every machine this runs
// on today) Unlock without options skips an N = 2^28 slot 0 by itself.
func TestKDFBudgetDefault(t *testing.T) {
	b := DefaultKDFMemoryBudget()
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	ram := si.Totalram * uint64(si.Unit)
	if b > KDFMemoryCeiling || b > ram/4*3 || b < 128*ScryptR<<ScryptDefaultLogN || b < Argon2idDefaultMemory*1024 {
		t.Fatalf("budget %d bytes (RAM %d)", b, ram)
	}
	t.Logf("KDF memory budget here: %s (RAM %s)", formatBytes(b), formatBytes(ram))
	s := KeySlot{Kind: SlotPassword, KDF: KDFScrypt, Scrypt: &ScryptParams{N: 1 << ScryptMaxLogN, R: ScryptR, P: ScryptP}}
	if b < s.KDFMemory() {
		cf, mk := tamperedFirst(t, func(p *ScryptParams) { p.N = 1 << ScryptMaxLogN })
		mustUnlock(t, cf, SlotPassword, "good", mk, 1)
	}
}
