package configfile

import (
	"fmt"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters of a key slot (RFC 9106). The defaults are RFC 9106's
// second recommendation (t=3, p=4) with the memory doubled to 128 MiB,
// which takes about a second on a small two-core machine.
const (
	// Argon2idDefaultTime is the default number of passes.
	Argon2idDefaultTime = 3
	// Argon2idDefaultMemory is the default memory in KiB (128 MiB).
	Argon2idDefaultMemory = 128 * 1024
	// Argon2idDefaultThreads is the default parallelism.
	Argon2idDefaultThreads = 4
	// Argon2idMinTime is the smallest accepted number of passes.
	Argon2idMinTime = 1
	// Argon2idMaxTime bounds the passes a hostile config can demand.
	Argon2idMaxTime = 64
	// Argon2idMinMemory is the smallest accepted memory in KiB (8 MiB):
	// below it the KDF is too cheap to protect a password, as scrypt
	// below N=1024 is refused.
	Argon2idMinMemory = 8 * 1024
	// Argon2idMaxMemory bounds the memory (KiB) a hostile config can
	// demand: 4 GiB.
	Argon2idMaxMemory = 4 * 1024 * 1024
	// Argon2idMaxThreads bounds the parallelism.
	Argon2idMaxThreads = 64
	// Argon2idSaltLen is the salt length written on creation and the
	// minimum accepted when loading.
	Argon2idSaltLen = 32
	// Argon2idKeyLen is the output length; the only accepted value.
	Argon2idKeyLen = 32
)

// Argon2idParams are the Argon2id parameters stored in a key slot. The
// field order is the JSON key order.
type Argon2idParams struct {
	// Salt is the random salt (std base64 in JSON).
	Salt []byte
	// Time is the number of passes over the memory.
	Time int
	// Memory is the memory size in KiB.
	Memory int
	// Threads is the degree of parallelism.
	Threads int
	// KeyLen is the output length, always 32.
	KeyLen int
}

// DefaultArgon2idParams returns the default costs (without a salt).
func DefaultArgon2idParams() Argon2idParams {
	return Argon2idParams{Time: Argon2idDefaultTime, Memory: Argon2idDefaultMemory, Threads: Argon2idDefaultThreads, KeyLen: Argon2idKeyLen}
}

// validateArgon2id refuses parameters that are too weak to protect a
// password or that a hostile config could use to exhaust the machine.
func validateArgon2id(a *Argon2idParams) error {
	switch {
	case a.Time < Argon2idMinTime:
		return invalid(RuleKeySlots, "argon2id time=%d is below the minimum %d", a.Time, Argon2idMinTime)
	case a.Time > Argon2idMaxTime:
		return invalid(RuleKeySlots, "argon2id time=%d is above the maximum %d", a.Time, Argon2idMaxTime)
	case a.Memory < Argon2idMinMemory:
		return invalid(RuleKeySlots, "argon2id memory=%d KiB is below the minimum %d KiB", a.Memory, Argon2idMinMemory)
	case a.Memory > Argon2idMaxMemory:
		return invalid(RuleKeySlots, "argon2id memory=%d KiB is above the maximum %d KiB", a.Memory, Argon2idMaxMemory)
	case a.Threads < 1 || a.Threads > Argon2idMaxThreads:
		return invalid(RuleKeySlots, "argon2id threads=%d is outside 1..%d", a.Threads, Argon2idMaxThreads)
	case len(a.Salt) < Argon2idSaltLen:
		return invalid(RuleKeySlots, "argon2id salt is %d bytes, below the minimum %d", len(a.Salt), Argon2idSaltLen)
	case a.KeyLen != Argon2idKeyLen:
		return invalid(RuleKeySlots, "argon2id KeyLen=%d, must be %d", a.KeyLen, Argon2idKeyLen)
	}
	return nil
}

// CheckArgon2idCosts checks user-chosen costs (-argon2id-time and
// -argon2id-memory) before any key is wrapped; it returns an error
// wrapping ErrArgon2idParams.
func CheckArgon2idCosts(p Argon2idParams) error {
	p.Salt = make([]byte, Argon2idSaltLen)
	p.KeyLen = Argon2idKeyLen
	if err := validateArgon2id(&p); err != nil {
		return fmt.Errorf("%w: %w", ErrArgon2idParams, err)
	}
	return nil
}

// key runs Argon2id on secret. The parameters must have been validated.
func (a *Argon2idParams) key(secret []byte) []byte {
	return argon2.IDKey(secret, a.Salt, uint32(a.Time), uint32(a.Memory), uint8(a.Threads), uint32(a.KeyLen))
}
