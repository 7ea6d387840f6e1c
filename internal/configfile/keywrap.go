package configfile

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/scrypt"

	"gocryptfs/internal/cryptocore"
)

// DecryptMasterKey unwraps the master key with password (docs/format.md
// 2.4–2.6): scrypt → KEK (HKDF-derived with the HKDF flag, else the scrypt
// output itself) → AES-256-GCM open with a 16-byte (12 without HKDF) nonce
// and 8 zero bytes of associated data.
//
// It returns ErrWrongPassword on authentication failure and ErrCorruptKey
// when EncryptedKey has the wrong length or an all-zero nonce. The caller
// owns the returned 32-byte key and should wipe it with cryptocore.Wipe.
// The password is neither stored nor modified.
func (cf *ConfFile) DecryptMasterKey(password []byte) ([]byte, error) {
	nonceLen := cf.wrapNonceLen()
	ek := cf.EncryptedKey
	if want := nonceLen + cryptocore.KeyLen + cryptocore.TagLen; len(ek) != want {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrCorruptKey, len(ek), want)
	}
	nonce := ek[:nonceLen]
	if allZero(nonce) {
		return nil, fmt.Errorf("%w: all-zero nonce", ErrCorruptKey)
	}
	aead, err := cf.keyWrapAEAD(password, nonceLen)
	if err != nil {
		return nil, err
	}
	mk, err := aead.Open(nil, nonce, ek[nonceLen:], wrapAAD())
	if err != nil {
		return nil, ErrWrongPassword
	}
	return mk, nil
}

// EncryptMasterKey (re)wraps masterKey with password, as -init and
// -passwd do: a fresh 32-byte salt, R = 8, P = 1, KeyLen = 32, a fresh
// random nonce and a new EncryptedKey. N becomes 2^logN; logN <= 0 keeps
// the current N (the -passwd default). A logN outside
// ScryptMinLogN..ScryptMaxLogN yields ErrScryptParams — callers that got an
// explicit -scryptn below 1 from the user must refuse it themselves, since
// 0 means "keep". Creator, flags and the other fields are not touched.
// On error cf is unchanged.
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
	if len(nonce) != cf.wrapNonceLen() {
		return fmt.Errorf("wrap nonce is %d bytes, want %d", len(nonce), cf.wrapNonceLen())
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
	old := cf.ScryptObject
	cf.ScryptObject = params
	aead, err := cf.keyWrapAEAD(password, len(nonce))
	if err != nil {
		cf.ScryptObject = old
		return err
	}
	ek := make([]byte, 0, len(nonce)+len(masterKey)+aead.Overhead())
	ek = append(ek, nonce...)
	cf.EncryptedKey = aead.Seal(ek, nonce, masterKey, wrapAAD())
	return nil
}

// keyWrapAEAD derives the key-encryption key from password and the scrypt
// parameters and returns the AES-256-GCM instance that (un)wraps the
// master key. The intermediate key material is wiped before returning;
// only the cipher's internal key schedule remains.
func (cf *ConfFile) keyWrapAEAD(password []byte, nonceLen int) (cipher.AEAD, error) {
	kek, err := cf.deriveKEK(password)
	if err != nil {
		return nil, err
	}
	defer cryptocore.Wipe(kek)
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("key wrapping cipher: %w", err)
	}
	return cipher.NewGCMWithNonceSize(block, nonceLen)
}

// deriveKEK computes the key-encryption key (docs/format.md 2.5).
func (cf *ConfFile) deriveKEK(password []byte) ([]byte, error) {
	s := &cf.ScryptObject
	out, err := scrypt.Key(password, s.Salt, s.N, s.R, s.P, s.KeyLen)
	if err != nil {
		// Validation excludes every parameter scrypt refuses, so this
		// only happens for a hand-modified ConfFile.
		return nil, fmt.Errorf("%w: %w", ErrScryptParams, err)
	}
	if !cf.IsFeatureFlagSet(FlagHKDF) {
		return out, nil
	}
	kek := cryptocore.HKDF(out, cryptocore.InfoGCM, cryptocore.KeyLen)
	cryptocore.Wipe(out)
	return kek, nil
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
