package configfile

import (
	"fmt"

	"gocryptfs/internal/cryptocore"
)

// CreateArgs describes a new filesystem's config, mirroring the -init
// options (docs/cli.md 3.2).
type CreateArgs struct {
	// Path is where WriteFile will write the config.
	Path string
	// Password is the scrypt input: the user's password, or the FIDO2
	// hmac-secret for FIDO2 filesystems. It is not retained.
	Password []byte
	// MasterKey is the key to wrap (-masterkey); nil means a fresh random
	// key.
	MasterKey []byte
	// Creator is written verbatim; -init uses "gocryptfs <version>".
	Creator string
	// LogN is log2 of the scrypt N (-scryptn); 0 means ScryptDefaultLogN.
	LogN int
	// PlaintextNames selects unencrypted names (-plaintextnames).
	PlaintextNames bool
	// DeterministicNames omits the DirIV flag (-deterministic-names).
	DeterministicNames bool
	// XChaCha20Poly1305 selects XChaCha20-Poly1305 contents (-xchacha).
	XChaCha20Poly1305 bool
	// AESSIV selects AES-SIV contents (-aessiv).
	AESSIV bool
	// Reverse marks a reverse-mode config; it implies AESSIV. It does not
	// change Path (callers use ConfReverseName).
	Reverse bool
	// LongNameMax is the -longnamemax threshold; 0 and 255 mean the
	// default (no LongNameMax flag). The command line's 62..255 range
	// check is the caller's job. Ignored with PlaintextNames.
	LongNameMax uint8
	// FIDO2, when non-nil, sets the FIDO2 flag and is stored in the config.
	FIDO2 *FIDO2Params
	// Slot, when non-nil, gives the first key slot's label and KDF
	// (-label, -argon2id); its Kind and FIDO2 are taken from the fields
	// above. Nil writes exactly what the reference's -init writes.
	Slot *SlotSpec
}

// Create builds a new, validated config exactly as -init does and wraps
// the master key with the password. It does not touch the filesystem; call
// WriteFile afterwards. It returns the master key (args.MasterKey itself,
// or the freshly generated one), which the caller should wipe after use.
//
// Feature flags are written in the reference's order (docs/format.md 2.3):
// HKDF; XChaCha20Poly1305 or else GCMIV128; then PlaintextNames, or DirIV
// (unless DeterministicNames), LongNameMax (if ≠ 255), EMENames,
// LongNames, Raw64; then AESSIV; then FIDO2.
//
// Errors: a *ValidationError for a forbidden combination (e.g. XChaCha and
// AES-SIV, or XChaCha with Reverse), ErrScryptParams for LogN outside
// ScryptMinLogN..ScryptMaxLogN, cryptocore.ErrBadKeyLen for a master key
// that is not 32 bytes.
func Create(args CreateArgs) (*ConfFile, []byte, error) {
	logN := args.LogN
	if logN == 0 {
		logN = ScryptDefaultLogN
	}
	if logN < ScryptMinLogN || logN > ScryptMaxLogN {
		return nil, nil, fmt.Errorf("%w: -scryptn %d is outside %d..%d", ErrScryptParams, logN, ScryptMinLogN, ScryptMaxLogN)
	}
	cf := &ConfFile{
		Creator: args.Creator,
		Version: CurrentVersion,
		path:    args.Path,
	}
	flags := []FeatureFlag{FlagHKDF}
	if args.XChaCha20Poly1305 {
		flags = append(flags, FlagXChaCha20Poly1305)
	} else {
		flags = append(flags, FlagGCMIV128)
	}
	if args.PlaintextNames {
		flags = append(flags, FlagPlaintextNames)
	} else {
		if !args.DeterministicNames {
			flags = append(flags, FlagDirIV)
		}
		if args.LongNameMax != 0 && args.LongNameMax != MaxLongNameMax {
			flags = append(flags, FlagLongNameMax)
			cf.LongNameMax = args.LongNameMax
		}
		flags = append(flags, FlagEMENames, FlagLongNames, FlagRaw64)
	}
	if args.AESSIV || args.Reverse {
		flags = append(flags, FlagAESSIV)
	}
	if args.FIDO2 != nil {
		flags = append(flags, FlagFIDO2)
		fido := *args.FIDO2
		cf.FIDO2 = &fido
	}
	cf.FeatureFlags = flags

	// Check the flags before paying for scrypt.
	if err := cf.validateFlags(); err != nil {
		return nil, nil, err
	}
	mk := args.MasterKey
	if mk == nil {
		mk = cryptocore.RandBytes(cryptocore.KeyLen)
	}
	if args.Slot == nil {
		if err := cf.EncryptMasterKey(mk, args.Password, logN); err != nil {
			return nil, nil, err
		}
	} else {
		spec := *args.Slot
		spec.Kind, spec.FIDO2, spec.ScryptLogN = SlotPassword, args.FIDO2, logN
		if args.FIDO2 != nil {
			spec.Kind = SlotFIDO2
		}
		s, err := cf.newSlot(mk, args.Password, spec, true, nil)
		if err != nil {
			return nil, nil, err
		}
		cf.setSlots([]KeySlot{s})
	}
	if err := cf.Validate(); err != nil {
		return nil, nil, err
	}
	return cf, mk, nil
}
