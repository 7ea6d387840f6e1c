// Package configfile reads, validates, creates and writes the gocryptfs
// configuration file (`gocryptfs.conf`, or `.gocryptfs.reverse.conf` in
// reverse mode) described in docs/format.md section 2, and wraps/unwraps the
// master key it stores.
//
// The package does no logging and keeps no global state. Errors are
// distinguishable with errors.Is / errors.As (see errors.go) so that the
// command line can map them to exit codes; the mapping itself lives in the
// caller.
package configfile

import (
	"fmt"
	"math"
	"strings"

	"gocryptfs/internal/cryptocore"
)

// File names and format constants (docs/format.md sections 2 and 11).
const (
	// ConfDefaultName is the config file name inside CIPHERDIR (forward mode).
	ConfDefaultName = "gocryptfs.conf"
	// ConfReverseName is the config file name inside the plaintext
	// directory in reverse mode.
	ConfReverseName = ".gocryptfs.reverse.conf"
	// TmpSuffix is appended to the config path for the temporary file that
	// WriteFile renames over the config.
	TmpSuffix = ".tmp"
	// BakSuffix is appended to the config path for the backup that the
	// command line creates before resetting a password with -masterkey.
	BakSuffix = ".bak"
	// CurrentVersion is the only accepted on-disk format version.
	CurrentVersion = 2
	// ConfFileMode is the permission of a freshly written config file.
	ConfFileMode = 0o400
)

// scrypt parameters (docs/format.md 2.4).
const (
	// ScryptDefaultLogN is log2(N) used by -init when -scryptn is not given.
	ScryptDefaultLogN = 16
	// ScryptMinLogN is the smallest log2(N) accepted when wrapping a key
	// (and N = 2^ScryptMinLogN is the smallest N accepted when loading).
	ScryptMinLogN = 10
	// ScryptMaxLogN is the largest log2(N) this package accepts, both for
	// wrapping and loading. It is the documented upper limit of -scryptn;
	// larger values would need more than 256 GiB of memory.
	ScryptMaxLogN = 28
	// ScryptR is the block size written on creation and the minimum
	// accepted when loading.
	ScryptR = 8
	// ScryptP is the parallelism written on creation and the minimum
	// accepted when loading.
	ScryptP = 1
	// ScryptSaltLen is the salt length written on creation and the minimum
	// accepted when loading.
	ScryptSaltLen = 32
	// ScryptKeyLen is the scrypt output length; the only accepted value.
	ScryptKeyLen = 32
)

// Long-name threshold limits (docs/format.md 6.6, docs/cli.md 3.2 -longnamemax).
const (
	// DefaultLongNameMax is the hashing threshold when the LongNameMax
	// flag is absent.
	DefaultLongNameMax = 255
	// MaxLongNameMax is the largest value the LongNameMax field can hold.
	MaxLongNameMax = 255
	// MinLongNameMax is the smallest threshold the command line accepts
	// for -longnamemax. The file format itself allows 1..255; enforcing
	// this bound is the caller's job.
	MinLongNameMax = 62
)

// Master-key wrapping parameters (docs/format.md 2.5/2.6).
const (
	// wrapNonceLen is the wrap nonce length with the HKDF flag.
	wrapNonceLen = 16
	// legacyWrapNonceLen is the wrap nonce length without the HKDF flag.
	legacyWrapNonceLen = 12
)

// FeatureFlag is one entry of the config's FeatureFlags array.
type FeatureFlag string

// The feature flags this reader knows: the eleven of a v2 reader
// (docs/format.md 2.3) plus FlagKeySlots. Any other string makes Load fail.
const (
	// FlagHKDF: subkeys and the key-wrapping key are derived with HKDF.
	// Always written by -init; absent in filesystems from before v1.3.
	FlagHKDF FeatureFlag = "HKDF"
	// FlagGCMIV128: 128-bit content nonces. Required for AES-GCM and
	// AES-SIV, forbidden with XChaCha20-Poly1305.
	FlagGCMIV128 FeatureFlag = "GCMIV128"
	// FlagXChaCha20Poly1305 selects XChaCha20-Poly1305 file contents.
	FlagXChaCha20Poly1305 FeatureFlag = "XChaCha20Poly1305"
	// FlagAESSIV selects AES-SIV-512 file contents (mandatory in reverse mode).
	FlagAESSIV FeatureFlag = "AESSIV"
	// FlagPlaintextNames stores names and symlink targets unencrypted.
	FlagPlaintextNames FeatureFlag = "PlaintextNames"
	// FlagEMENames is informational: names are EME-encrypted whenever
	// PlaintextNames is absent. Written by every non-plaintext -init.
	FlagEMENames FeatureFlag = "EMENames"
	// FlagDirIV: every directory has a random gocryptfs.diriv. Absent
	// means deterministic names (all-zero tweak).
	FlagDirIV FeatureFlag = "DirIV"
	// FlagLongNames is informational: long-name hashing is always active
	// on mount. Written by every non-plaintext -init.
	FlagLongNames FeatureFlag = "LongNames"
	// FlagLongNameMax: the LongNameMax field holds the hashing threshold.
	FlagLongNameMax FeatureFlag = "LongNameMax"
	// FlagRaw64: unpadded base64 for names; padded when absent (legacy).
	FlagRaw64 FeatureFlag = "Raw64"
	// FlagFIDO2: the scrypt password comes from a FIDO2 token.
	FlagFIDO2 FeatureFlag = "FIDO2"
	// FlagKeySlots: the first key slot is one the reference cannot use
	// (Argon2id, key file, or a slot-format wrap), so every slot lives in
	// KeySlots and EncryptedKey is empty. The reference does not know this
	// flag and refuses the config with its "unknown feature flag" error
	// instead of misreading it. Not set when only extra slots exist.
	FlagKeySlots FeatureFlag = "KeySlots"
)

// KnownFlags returns the twelve known feature flags in a fresh slice.
//
// Of these, -init always writes HKDF, EMENames (unless PlaintextNames),
// LongNames (unless PlaintextNames) and Raw64 (unless PlaintextNames); their
// absence only occurs in legacy filesystems that a v2 reader still accepts.
// See Create for the exact set and order a new config gets.
func KnownFlags() []FeatureFlag {
	return []FeatureFlag{
		FlagHKDF, FlagGCMIV128, FlagXChaCha20Poly1305, FlagAESSIV,
		FlagPlaintextNames, FlagEMENames, FlagDirIV, FlagLongNames,
		FlagLongNameMax, FlagRaw64, FlagFIDO2, FlagKeySlots,
	}
}

// Known reports whether f is one of the twelve known flags.
func (f FeatureFlag) Known() bool {
	switch f {
	case FlagHKDF, FlagGCMIV128, FlagXChaCha20Poly1305, FlagAESSIV,
		FlagPlaintextNames, FlagEMENames, FlagDirIV, FlagLongNames,
		FlagLongNameMax, FlagRaw64, FlagFIDO2, FlagKeySlots:
		return true
	}
	return false
}

// ScryptParams are the scrypt parameters of the password hash
// (docs/format.md 2.4). The field order is the JSON key order.
type ScryptParams struct {
	// Salt is the scrypt salt (std base64 in JSON), 32 random bytes.
	Salt []byte
	// N is the CPU/memory cost (not its logarithm).
	N int
	// R is the block size, written as 8.
	R int
	// P is the parallelism, written as 1.
	P int
	// KeyLen is the output length, always 32.
	KeyLen int
}

// LogN returns round(log2(N)), the -scryptn value that reproduces N. N is
// a power of two in every validated config, so the result is exact there.
func (s *ScryptParams) LogN() int {
	if s.N <= 1 {
		return 0
	}
	return int(math.Round(math.Log2(float64(s.N))))
}

// FIDO2Params is the FIDO2 object of a config with the FIDO2 flag
// (docs/format.md 2.7).
type FIDO2Params struct {
	// CredentialID is the credential id returned by fido2-cred.
	CredentialID []byte
	// HMACSalt is the 32-byte salt for the hmac-secret extension.
	HMACSalt []byte
	// AssertOptions are extra `fido2-assert -t` options chosen at init;
	// nil is written as JSON null.
	AssertOptions []string
}

// ConfFile is the content of a config file. The exported fields are the
// JSON fields, in the order the reference writes them (docs/format.md 2.2).
//
// A ConfFile returned by Load, Parse or Create has passed validation.
// Callers that modify the fields directly are responsible for keeping it
// valid; WriteFile re-validates before writing.
type ConfFile struct {
	// Creator names the program that created the file; never interpreted.
	Creator string `json:"Creator"`
	// EncryptedKey is nonce ‖ AES-256-GCM(KEK, MK) ‖ tag (docs/format.md 2.6).
	EncryptedKey []byte `json:"EncryptedKey"`
	// ScryptObject holds the password-hash parameters.
	ScryptObject ScryptParams `json:"ScryptObject"`
	// Version is the on-disk format version; must be CurrentVersion.
	Version uint16 `json:"Version"`
	// FeatureFlags lists the enabled features, in file order.
	FeatureFlags []FeatureFlag `json:"FeatureFlags"`
	// FIDO2 is present only with the FIDO2 flag.
	FIDO2 *FIDO2Params `json:"FIDO2,omitempty"`
	// LongNameMax is the long-name threshold; 0 (omitted) means unset.
	LongNameMax uint8 `json:"LongNameMax,omitempty"`
	// FirstKeySlot holds the label and creation time of the slot stored
	// in EncryptedKey/ScryptObject; omitted when neither is known. The
	// reference ignores it.
	FirstKeySlot *SlotMeta `json:"FirstKeySlot,omitempty"`
	// KeySlots are the further key slots (all slots with FlagKeySlots).
	// The reference ignores this field.
	KeySlots []KeySlot `json:"KeySlots,omitempty"`

	// path is where the file was loaded from / will be written to.
	path string
}

// Path returns the file path the config was loaded from or will be
// written to.
func (cf *ConfFile) Path() string { return cf.path }

// IsFeatureFlagSet reports whether flag appears in FeatureFlags.
func (cf *ConfFile) IsFeatureFlagSet(flag FeatureFlag) bool {
	for _, f := range cf.FeatureFlags {
		if f == flag {
			return true
		}
	}
	return false
}

// ContentCipher returns the file-content cipher selected by the flags:
// XChaCha20-Poly1305, AES-SIV, or else AES-256-GCM.
func (cf *ConfFile) ContentCipher() cryptocore.ContentCipher {
	switch {
	case cf.IsFeatureFlagSet(FlagXChaCha20Poly1305):
		return cryptocore.XChaCha20Poly1305
	case cf.IsFeatureFlagSet(FlagAESSIV):
		return cryptocore.AESSIV
	}
	return cryptocore.AESGCM
}

// EffectiveLongNameMax returns the long-name hashing threshold: the
// LongNameMax field when the LongNameMax flag is set, else 255.
func (cf *ConfFile) EffectiveLongNameMax() int {
	if cf.IsFeatureFlagSet(FlagLongNameMax) && cf.LongNameMax != 0 {
		return int(cf.LongNameMax)
	}
	return DefaultLongNameMax
}

// Info returns the five-line summary printed by -info (docs/cli.md 6.2), each
// line terminated by "\n", labels padded to 19 columns.
func (cf *ConfFile) Info() string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-19s"+format+"\n", append([]any{label + ":"}, args...)...)
	}
	flags := make([]string, len(cf.FeatureFlags))
	for i, f := range cf.FeatureFlags {
		flags[i] = string(f)
	}
	s := &cf.ScryptObject
	line("Creator", "%s", cf.Creator)
	line("FeatureFlags", "%s", strings.Join(flags, " "))
	line("EncryptedKey", "%dB", len(cf.EncryptedKey))
	if cf.IsFeatureFlagSet(FlagKeySlots) {
		line("ScryptObject", "unused placeholder (all key slots are in KeySlots)")
	} else {
		line("ScryptObject", "Salt=%dB N=%d R=%d P=%d KeyLen=%d", len(s.Salt), s.N, s.R, s.P, s.KeyLen)
	}
	line("contentEncryption", "%s", cf.ContentCipher())
	if cf.hasSlotData() {
		slots := cf.Slots()
		line("KeySlots", "%d", len(slots))
		for i := range slots {
			line(fmt.Sprintf("  slot %d", i), "%s", slots[i].Describe())
		}
	}
	return b.String()
}
