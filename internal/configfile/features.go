package configfile

import "gocryptfs/internal/cryptocore"

// Features are the filesystem parameters that a config's feature flags
// select (docs/format.md 2.2): what the ciphers and the name encryption
// of the filesystem are built with. This is the one place that reads the
// flags for them; a mount with -masterkey, which reads no config, takes
// the same parameters from its command-line flags instead.
type Features struct {
	// Cipher encrypts the file contents (XChaCha20Poly1305 or AESSIV
	// flag, else AES-GCM).
	Cipher cryptocore.ContentCipher
	// HKDF derives the content and name keys from the master key with
	// HKDF (flag HKDF).
	HKDF bool
	// PlaintextNames leaves names unencrypted (flag PlaintextNames).
	PlaintextNames bool
	// DeterministicNames encrypts names without per-directory IVs: names
	// are encrypted, but there is no DirIV flag.
	DeterministicNames bool
	// Raw64 writes encrypted names in unpadded base64 (flag Raw64).
	Raw64 bool
	// LongNameMax is the length above which an encrypted name is stored
	// hashed (EffectiveLongNameMax).
	LongNameMax int
}

// Features returns the parameters that cf's feature flags select. The
// flag combinations were checked when cf was loaded (Validate), so every
// loaded config has a consistent set.
func (cf *ConfFile) Features() Features {
	has := cf.IsFeatureFlagSet
	plain := has(FlagPlaintextNames)
	return Features{
		Cipher:             cf.ContentCipher(),
		HKDF:               has(FlagHKDF),
		PlaintextNames:     plain,
		DeterministicNames: !plain && !has(FlagDirIV),
		Raw64:              has(FlagRaw64),
		LongNameMax:        cf.EffectiveLongNameMax(),
	}
}
