package configfile

import (
	"fmt"
	"testing"
)

// BenchmarkUnlock measures an unlock with 1, 4 and 8 password slots at the
// default KDF costs: the right password in the last slot (the worst case
// for a right password) and a wrong password, which runs every slot's KDF
// once. Each slot has its own salt, so there is no shortcut; the README
// lists the figures.
func BenchmarkUnlock(b *testing.B) {
	for _, kdf := range []string{"scrypt", "argon2id"} {
		for _, n := range []int{1, 4, 8} {
			spec := SlotSpec{Kind: SlotPassword}
			if kdf == "argon2id" {
				p := DefaultArgon2idParams()
				spec.Argon2id = &p
			}
			cf, mk, err := Create(CreateArgs{Password: []byte("p0"), Slot: &spec})
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i < n; i++ {
				if _, err := cf.AddSlot(mk, []byte(fmt.Sprintf("p%d", i)), spec); err != nil {
					b.Fatal(err)
				}
			}
			last := fmt.Sprintf("p%d", n-1)
			for _, c := range []struct{ name, pw string }{{"last", last}, {"wrong", "nope"}} {
				b.Run(fmt.Sprintf("%s/%dslots/%s", kdf, n, c.name), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						_, _, err := cf.Unlock(SlotPassword, same(c.pw))
						if (err == nil) != (c.pw == last) {
							b.Fatalf("Unlock(%q): %v", c.pw, err)
						}
					}
				})
			}
		}
	}
}
