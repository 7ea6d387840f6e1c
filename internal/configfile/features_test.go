package configfile

import (
	"testing"

	"gocryptfs/internal/cryptocore"
)

// TestFeatures: the parameters each set of feature flags selects, as the
// reference's -init writes them (docs/format.md 2.2).
func TestFeatures(t *testing.T) {
	for _, c := range []struct {
		flags []FeatureFlag
		lnm   uint8
		want  Features
	}{
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64}, 0,
			Features{Cipher: cryptocore.AESGCM, HKDF: true, Raw64: true, LongNameMax: 255}},
		{[]FeatureFlag{FlagGCMIV128, FlagDirIV, FlagEMENames, FlagLongNames}, 0,
			Features{Cipher: cryptocore.AESGCM, LongNameMax: 255}},
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagEMENames, FlagLongNames, FlagRaw64}, 0,
			Features{Cipher: cryptocore.AESGCM, HKDF: true, DeterministicNames: true, Raw64: true, LongNameMax: 255}},
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagPlaintextNames}, 0,
			Features{Cipher: cryptocore.AESGCM, HKDF: true, PlaintextNames: true, LongNameMax: 255}},
		{[]FeatureFlag{FlagHKDF, FlagXChaCha20Poly1305, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64, FlagLongNameMax}, 62,
			Features{Cipher: cryptocore.XChaCha20Poly1305, HKDF: true, Raw64: true, LongNameMax: 62}},
		{[]FeatureFlag{FlagHKDF, FlagGCMIV128, FlagAESSIV, FlagDirIV, FlagEMENames, FlagLongNames, FlagRaw64}, 0,
			Features{Cipher: cryptocore.AESSIV, HKDF: true, Raw64: true, LongNameMax: 255}},
	} {
		cf := &ConfFile{FeatureFlags: c.flags, LongNameMax: c.lnm}
		if got := cf.Features(); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.flags, got, c.want)
		}
	}
}
