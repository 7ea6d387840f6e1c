package configfile

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/scrypt"

	"gocryptfs/internal/cryptocore"
)

// DecryptMasterKey unwraps the master key of slot 0 with password: for a
// reference-format slot (docs/format.md 2.4–2.6) scrypt → KEK (HKDF-derived with
// the HKDF flag, else the scrypt output itself) → AES-256-GCM open with a
// 16-byte (12 without HKDF) nonce and 8 zero bytes of associated data.
// UnlockWith tries every slot.
//
// It returns ErrWrongPassword on authentication failure, ErrCorruptKey
// when EncryptedKey has the wrong length or an all-zero nonce, and an
// error wrapping ErrKDFBudget when the slot's KDF is over this machine's
// budget (DefaultKDFMemoryBudget). The caller
// owns the returned 32-byte key and should wipe it with cryptocore.Wipe.
// The password is neither stored nor modified.
func (cf *ConfFile) DecryptMasterKey(password []byte) ([]byte, error) {
	slots := cf.Slots()
	if err := slots[0].Validate(); err != nil {
		return nil, fmt.Errorf("key slot 0: %w", err)
	}
	return cf.openSlot(&slots[0], password, DefaultKDFMemoryBudget())
}

// openSlot unwraps the master key stored in s with secret; a KDF over
// budget (bytes of memory) is refused before it runs.
func (cf *ConfFile) openSlot(s *KeySlot, secret []byte, budget uint64) ([]byte, error) {
	nonceLen := cf.slotNonceLen(s)
	ek := s.EncryptedKey
	if want := nonceLen + cryptocore.KeyLen + cryptocore.TagLen; len(ek) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrCorruptKey, len(ek), want)
	}
	nonce := ek[:nonceLen]
	if allZero(nonce) {
		return nil, fmt.Errorf("%w: all-zero nonce", ErrCorruptKey)
	}
	aad, err := slotAAD(s)
	if err != nil {
		return nil, err
	}
	aead, err := cf.slotAEAD(s, secret, budget)
	if err != nil {
		return nil, err
	}
	mk, err := aead.Open(nil, nonce, ek[nonceLen:], aad)
	if err != nil {
		return nil, ErrWrongPassword
	}
	return mk, nil
}

// EncryptMasterKey (re)wraps masterKey with password in slot 0 in the
// reference's format, as -init does: a fresh 32-byte salt, R = 8, P = 1,
// KeyLen = 32, a fresh random nonce and a new EncryptedKey. N becomes
// 2^logN; logN <= 0 keeps the current N. A logN outside
// ScryptMinLogN..ScryptMaxLogN yields ErrScryptParams — callers that got an
// explicit -scryptn below 1 from the user must refuse it themselves, since
// 0 means "keep". Creator, flags and the other slots are not touched; the
// config must not have FlagKeySlots (use ReplaceSlot). On error cf is
// unchanged.
func (cf *ConfFile) EncryptMasterKey(masterKey, password []byte, logN int) error {
	nonce := cryptocore.RandBytes(cf.wrapNonceLen())
	for allZero(nonce) { // an all-zero nonce would be refused by readers
		nonce = cryptocore.RandBytes(len(nonce))
	}
	return cf.encryptMasterKey(masterKey, password, logN, cryptocore.RandBytes(ScryptSaltLen), nonce)
}

// encryptMasterKey is EncryptMasterKey with caller-chosen salt and nonce,
// so that tests can reproduce fixed vectors.
func (cf *ConfFile) encryptMasterKey(masterKey, password []byte, logN int, salt, nonce []byte) error {
	if len(masterKey) != cryptocore.KeyLen {
		return cryptocore.ErrBadKeyLen
	}
	if cf.IsFeatureFlagSet(FlagKeySlots) {
		return fmt.Errorf("feature flag %s is set: slot 0 is not in the reference's fields", FlagKeySlots)
	}
	n := cf.ScryptObject.N
	if logN > 0 {
		if logN < ScryptMinLogN || logN > ScryptMaxLogN {
			return fmt.Errorf("%w: -scryptn %d is outside %d..%d", ErrScryptParams, logN, ScryptMinLogN, ScryptMaxLogN)
		}
		n = 1 << logN
	}
	params := ScryptParams{Salt: salt, N: n, R: ScryptR, P: ScryptP, KeyLen: ScryptKeyLen}
	if err := validateScrypt(&params); err != nil {
		return fmt.Errorf("%w: %w", ErrScryptParams, err)
	}
	s := KeySlot{Kind: SlotPassword, KDF: KDFScrypt, Scrypt: &params, legacy: true}
	if err := cf.wrapSlot(&s, masterKey, password, nonce); err != nil {
		return err
	}
	cf.ScryptObject = params
	cf.EncryptedKey = s.EncryptedKey
	return nil
}

// wrapSlot seals masterKey under secret with the slot's parameters and
// the given nonce and stores the result in s.EncryptedKey. Costs above
// this machine's KDF budget are refused (wrapping ErrScryptParams or
// ErrArgon2idParams, and ErrKDFBudget), so that a slot created here can
// be opened here.
func (cf *ConfFile) wrapSlot(s *KeySlot, masterKey, secret, nonce []byte) error {
	if len(nonce) != cf.slotNonceLen(s) {
		return fmt.Errorf("wrap nonce is %d bytes, want %d", len(nonce), cf.slotNonceLen(s))
	}
	s.EncryptedKey = nil
	aad, err := slotAAD(s)
	if err != nil {
		return err
	}
	if err := s.checkKDFBudget(DefaultKDFMemoryBudget()); err != nil {
		if s.KDF == KDFArgon2id {
			return fmt.Errorf("%w: %w", ErrArgon2idParams, err)
		}
		return fmt.Errorf("%w: %w", ErrScryptParams, err)
	}
	aead, err := cf.slotAEAD(s, secret, KDFMemoryCeiling)
	if err != nil {
		return err
	}
	ek := make([]byte, 0, len(nonce)+len(masterKey)+aead.Overhead())
	ek = append(ek, nonce...)
	s.EncryptedKey = aead.Seal(ek, nonce, masterKey, aad)
	return nil
}

// slotAEAD derives the key-encryption key of slot s from secret and
// returns the AES-256-GCM instance that (un)wraps the master key. The
// intermediate key material is wiped before returning; only the cipher's
// internal key schedule remains.
func (cf *ConfFile) slotAEAD(s *KeySlot, secret []byte, budget uint64) (cipher.AEAD, error) {
	kek, err := cf.deriveKEK(s, secret, budget)
	if err != nil {
		return nil, err
	}
	defer cryptocore.Wipe(kek)
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("key wrapping cipher: %w", err)
	}
	return cipher.NewGCMWithNonceSize(block, cf.slotNonceLen(s))
}

// deriveKEK computes the key-encryption key: docs/format.md 2.5 for a
// reference-format slot, HKDF(KDF output, slotKEKInfo) otherwise. Every
// KDF run goes through here, and a cost over budget (bytes of memory) or
// over ScryptMaxWork is refused before anything is allocated.
func (cf *ConfFile) deriveKEK(s *KeySlot, secret []byte, budget uint64) ([]byte, error) {
	if err := s.checkKDFBudget(budget); err != nil {
		return nil, err
	}
	var out []byte
	switch {
	case s.KDF == KDFScrypt && s.Scrypt != nil:
		p := s.Scrypt
		var err error
		out, err = scrypt.Key(secret, p.Salt, p.N, p.R, p.P, p.KeyLen)
		if err != nil {
			// Validation excludes every parameter scrypt refuses, so this
			// only happens for a hand-modified ConfFile.
			return nil, fmt.Errorf("%w: %w", ErrScryptParams, err)
		}
	case s.KDF == KDFArgon2id && s.Argon2id != nil:
		out = s.Argon2id.key(secret)
	default:
		return nil, fmt.Errorf("key slot has no usable KDF %q", s.KDF)
	}
	if s.legacy && !cf.IsFeatureFlagSet(FlagHKDF) {
		return out, nil
	}
	info := slotKEKInfo
	if s.legacy {
		info = cryptocore.InfoGCM
	}
	kek := cryptocore.HKDF(out, info, cryptocore.KeyLen)
	cryptocore.Wipe(out)
	return kek, nil
}

// slotNonceLen is the wrap nonce length of s: the reference's for a
// reference-format slot, slotNonceLen otherwise.
func (cf *ConfFile) slotNonceLen(s *KeySlot) int {
	if s.legacy {
		return cf.wrapNonceLen()
	}
	return slotNonceLen
}

// wrapNonceLen is 16 with the HKDF flag and 12 for legacy configs.
func (cf *ConfFile) wrapNonceLen() int {
	if cf.IsFeatureFlagSet(FlagHKDF) {
		return wrapNonceLen
	}
	return legacyWrapNonceLen
}

// wrapAAD is the associated data of the wrapped key: BE64(block number 0),
// the content-block AAD without a file ID.
func wrapAAD() []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), 0)
}

func allZero(b []byte) bool {
	var acc byte
	for _, x := range b {
		acc |= x
	}
	return acc == 0
}
