package configfile

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// maxConfSize bounds how much Load reads, so that pointing -config at a
// device or a huge file fails instead of exhausting memory. Real configs
// are well under 1 KiB.
const maxConfSize = 1 << 20

// Load reads, parses and validates the config file at path. Errors:
// a wrapped fs.ErrNotExist (or other *fs.PathError) when the file cannot be
// read, ErrMalformed for bad JSON, a *ValidationError (matching ErrInvalid
// and, for v0.4–v0.6 filesystems, ErrTooOld) for refused configs.
//
// The path is resolved as given, symlinks included: it is the user's
// -config or CIPHERDIR/gocryptfs.conf, and a symlinked config is a setup
// the reference supports. Whoever can write CIPHERDIR can plant such a
// symlink (or a FIFO or device node in its place); Load therefore opens
// without blocking and reads only a regular file, at most maxConfSize
// bytes (ReadRaw), and uses what it reads only as a config whose master
// key the user's password must authenticate.
func Load(path string) (*ConfFile, error) {
	cf, _, err := LoadRaw(path)
	return cf, err
}

// LoadRaw is Load that also returns what it parsed: the bytes and the
// stat result of the file read. A reverse mount serves exactly these
// bytes as the view's gocryptfs.conf.
func LoadRaw(path string) (*ConfFile, *Raw, error) {
	raw, err := ReadRaw(path)
	if err != nil {
		return nil, nil, err
	}
	cf, err := Parse(raw.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	cf.path = path
	return cf, raw, nil
}

// Raw is a config file as read from disk, not parsed.
type Raw struct {
	// Data is the file's content.
	Data []byte
	// Stat describes the file that was read (symlinks followed): a
	// regular file, of size len(Data) when it did not change meanwhile.
	Stat unix.Stat_t
}

// ReadRaw reads the config file at path with Load's rules (path resolved
// as given, symlinks included; opened O_NONBLOCK; only a regular file of
// at most maxConfSize bytes is read) without parsing it. Errors: a
// *fs.PathError when the file cannot be opened, ErrMalformed for a file
// that is not regular or too large. It never blocks on a FIFO or opens a
// device's driver.
func ReadRaw(path string) (*Raw, error) {
	fd, err := syscallcompat.RetryInt(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	raw := &Raw{}
	if err := syscallcompat.Fstat(fd, &raw.Stat); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if raw.Stat.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("config file %s: %w: not a regular file", path, ErrMalformed)
	}
	raw.Data, err = io.ReadAll(io.LimitReader(f, maxConfSize+1))
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	if len(raw.Data) > maxConfSize {
		return nil, fmt.Errorf("config file %s: %w: larger than %d bytes", path, ErrMalformed, maxConfSize)
	}
	return raw, nil
}

// Parse parses and validates a config from its JSON bytes, like Load but
// without a file (the result has an empty Path). Field names are matched
// case-insensitively and unknown keys are ignored, as the reference does.
func Parse(data []byte) (*ConfFile, error) {
	var cf ConfFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := cf.Validate(); err != nil {
		return nil, err
	}
	return &cf, nil
}

// Validate checks the rules of docs/format.md 2.3 in their listed order (rule 2
// being the scrypt limits of 2.4) and returns the first violation as a
// *ValidationError.
//
// Beyond the spec's lower limits it also refuses what would make the
// key derivation fail or exhaust memory: N not a power of two, N above
// 2^ScryptMaxLogN, R·N above what logN 28 with R = 8 needs, R·P ≥ 2^30,
// KeyLen other than 32, and a FIDO2 flag without FIDO2 parameters (rule 10).
func (cf *ConfFile) Validate() error {
	if cf.Version != CurrentVersion {
		return invalid(RuleVersion, "unsupported on-disk format %d", cf.Version)
	}
	if err := validateScrypt(&cf.ScryptObject); err != nil {
		return err
	}
	return cf.validateFlags()
}

// validateFlags checks rules 3 to 11.
func (cf *ConfFile) validateFlags() error {
	for _, f := range cf.FeatureFlags {
		if !f.Known() {
			return invalid(RuleUnknownFlag, "unknown feature flag %q", string(f))
		}
	}
	has := cf.IsFeatureFlagSet
	xchacha, siv, gcm128 := has(FlagXChaCha20Poly1305), has(FlagAESSIV), has(FlagGCMIV128)
	if xchacha && siv {
		return invalid(RuleXChaChaAESSIV, "feature flags %s and %s are mutually exclusive", FlagXChaCha20Poly1305, FlagAESSIV)
	}
	if siv && !gcm128 {
		return invalid(RuleAESSIVNeedsGCM128, "feature flag %s requires %s", FlagAESSIV, FlagGCMIV128)
	}
	if xchacha && gcm128 {
		return invalid(RuleXChaCha, "feature flag %s forbids %s", FlagXChaCha20Poly1305, FlagGCMIV128)
	}
	if xchacha && !has(FlagHKDF) {
		return invalid(RuleXChaCha, "feature flag %s requires %s", FlagXChaCha20Poly1305, FlagHKDF)
	}
	if !xchacha && !siv && !gcm128 {
		return invalid(RuleGCMNeedsGCMIV128,
			"this filesystem was created by gocryptfs v0.6 or older (feature flag %s is missing) and is not supported by gocryptfs v2; "+
				"mount it with an older gocryptfs version (v1.x) and copy the files to a new filesystem to migrate",
			FlagGCMIV128)
	}
	if has(FlagPlaintextNames) {
		for _, f := range []FeatureFlag{FlagEMENames, FlagDirIV, FlagLongNames, FlagRaw64, FlagLongNameMax} {
			if has(f) {
				return invalid(RulePlaintextNames, "feature flag %s forbids %s", FlagPlaintextNames, f)
			}
		}
	}
	if cf.LongNameMax != 0 && !has(FlagLongNameMax) {
		return invalid(RuleLongNameMax, "LongNameMax is set to %d but feature flag %s is missing", cf.LongNameMax, FlagLongNameMax)
	}
	if cf.LongNameMax == 0 && has(FlagLongNameMax) {
		return invalid(RuleLongNameMax, "feature flag %s is set but the LongNameMax value is missing", FlagLongNameMax)
	}
	if has(FlagFIDO2) && (cf.FIDO2 == nil || len(cf.FIDO2.CredentialID) == 0 || len(cf.FIDO2.HMACSalt) == 0) {
		return invalid(RuleFIDO2, "feature flag %s is set but the FIDO2 credential is missing", FlagFIDO2)
	}
	return cf.validateSlotLayout()
}

func validateScrypt(s *ScryptParams) error {
	switch {
	case s.N < 1<<ScryptMinLogN:
		return invalid(RuleScrypt, "scrypt N=%d is below the minimum %d", s.N, 1<<ScryptMinLogN)
	case s.N&(s.N-1) != 0:
		return invalid(RuleScrypt, "scrypt N=%d is not a power of two", s.N)
	case s.N > 1<<ScryptMaxLogN:
		return invalid(RuleScrypt, "scrypt N=%d is above the maximum %d", s.N, 1<<ScryptMaxLogN)
	case s.R < ScryptR:
		return invalid(RuleScrypt, "scrypt R=%d is below the minimum %d", s.R, ScryptR)
	case mulExceeds(s.R, s.N, ScryptR<<ScryptMaxLogN):
		return invalid(RuleScrypt, "scrypt R=%d with N=%d needs too much memory", s.R, s.N)
	case s.P < ScryptP:
		return invalid(RuleScrypt, "scrypt P=%d is below the minimum %d", s.P, ScryptP)
	case mulExceeds(s.R, s.P, 1<<30-1):
		return invalid(RuleScrypt, "scrypt R=%d with P=%d is too large", s.R, s.P)
	case len(s.Salt) < ScryptSaltLen:
		return invalid(RuleScrypt, "scrypt salt is %d bytes, below the minimum %d", len(s.Salt), ScryptSaltLen)
	case s.KeyLen != ScryptKeyLen:
		return invalid(RuleScrypt, "scrypt KeyLen=%d, must be %d", s.KeyLen, ScryptKeyLen)
	}
	return nil
}

// mulExceeds reports whether a·b > limit for non-negative a and b, without
// overflowing.
func mulExceeds(a, b int, limit uint64) bool {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return hi != 0 || lo > limit
}
