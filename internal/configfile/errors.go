package configfile

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Suggested exit codes (docs/cli.md 7) are
// given for the command line's benefit; this package does not exit.
var (
	// ErrWrongPassword: the wrapped master key failed authentication, i.e.
	// the password is wrong (exit 12). The message is the reference's.
	//
	//lint:ignore ST1005 the reference's exact user-facing wording
	ErrWrongPassword = errors.New("Password incorrect.")

	// ErrCorruptKey: EncryptedKey has the wrong length or an all-zero
	// nonce, so it cannot be unwrapped with any password (exit 12, "master
	// key could not be unlocked").
	ErrCorruptKey = errors.New("encrypted master key is malformed")

	// ErrMalformed: the file is not valid JSON for a config (includes an
	// empty or truncated file, and values out of range for their field
	// type such as Version 70000). Exit 11 when mounting, 8 for -info.
	ErrMalformed = errors.New("malformed config file")

	// ErrInvalid matches every *ValidationError: the JSON parsed but the
	// config is refused by the rules of docs/format.md 2.3/2.4 (exit 27).
	ErrInvalid = errors.New("invalid config file")

	// ErrTooOld matches the *ValidationError for rule 7 (AES-GCM without
	// GCMIV128): a filesystem created by gocryptfs v0.6 or older (exit 27).
	ErrTooOld = errors.New("filesystem created by gocryptfs v0.6 or older")

	// ErrScryptParams: a requested scrypt cost (log2 N) is outside
	// ScryptMinLogN..ScryptMaxLogN when wrapping a key (exit 13 for
	// -passwd, 24 for -init). Weak parameters inside a loaded config are
	// reported as a *ValidationError with Rule 2 instead.
	ErrScryptParams = errors.New("scrypt parameters out of range")

	// ErrNoPath: WriteFile was called on a ConfFile without a path.
	ErrNoPath = errors.New("config file path not set")

	// ErrArgon2idParams: requested Argon2id parameters are outside the
	// accepted limits when wrapping a key (exit 13, like ErrScryptParams).
	// Weak parameters inside a loaded slot are a *ValidationError instead.
	ErrArgon2idParams = errors.New("argon2id parameters out of range")

	// ErrNoSlot: the config has no usable key slot for the kind of secret
	// given (e.g. a key file for a config without key-file slots).
	ErrNoSlot = errors.New("no key slot for this kind of secret")

	// ErrLastSlot: removing the only key slot would lock everyone out.
	ErrLastSlot = errors.New("refusing to remove the last key slot")

	// ErrKDFBudget: a slot's KDF would need more memory than the budget
	// (DefaultKDFMemoryBudget) or more scrypt work than ScryptMaxWork. The
	// slot is skipped unopened; when no slot is left to try, the command
	// line exits 13 like for ErrScryptParams.
	ErrKDFBudget = errors.New("key derivation cost above the budget")

	// ErrTooManySlots: adding a slot would exceed MaxKeySlots.
	ErrTooManySlots = errors.New("too many key slots")
)

// Validation rule numbers carried by ValidationError.Rule. 1..9 are the
// rules of docs/format.md 2.3 (rule 2 covers the scrypt limits of 2.4).
const (
	RuleVersion           = 1  // Version must be 2
	RuleScrypt            = 2  // scrypt limits
	RuleUnknownFlag       = 3  // every flag must be known
	RuleXChaChaAESSIV     = 4  // XChaCha20Poly1305 and AESSIV are exclusive
	RuleAESSIVNeedsGCM128 = 5  // AESSIV requires GCMIV128
	RuleXChaCha           = 6  // XChaCha forbids GCMIV128 and requires HKDF
	RuleGCMNeedsGCMIV128  = 7  // AES-GCM requires GCMIV128 (too old otherwise)
	RulePlaintextNames    = 8  // PlaintextNames forbids name-encryption flags
	RuleLongNameMax       = 9  // LongNameMax field and flag go together
	RuleFIDO2             = 10 // FIDO2 flag needs the FIDO2 object (beyond the spec: without it the config cannot be unlocked)
	RuleKeySlots          = 11 // key-slot layout (KeySlots flag, slot count) and each slot's own parameters
)

// ValidationError reports why a syntactically valid config was refused.
// errors.Is(err, ErrInvalid) holds for every ValidationError, and
// errors.Is(err, ErrTooOld) additionally for Rule == RuleGCMNeedsGCMIV128.
type ValidationError struct {
	// Rule is one of the Rule* constants.
	Rule int
	// Msg is a human-readable explanation.
	Msg string
}

// Error returns Msg.
func (e *ValidationError) Error() string { return e.Msg }

// Is implements the ErrInvalid / ErrTooOld matching described on the type.
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (target == ErrTooOld && e.Rule == RuleGCMNeedsGCMIV128)
}

func invalid(rule int, format string, args ...any) *ValidationError {
	return &ValidationError{Rule: rule, Msg: fmt.Sprintf(format, args...)}
}
