package cryptocore

import (
	"crypto/cipher"
	"errors"

	"github.com/jacobsa/crypto/siv"
)

// sivAEAD adapts RFC 5297 AES-SIV to cipher.AEAD the way gocryptfs uses it:
// the associated-data vector is [ad, nonce] and the output is SIV ‖ C.
type sivAEAD struct {
	key []byte
}

// NewAESSIV returns AES-SIV-512 as a cipher.AEAD with 16-byte nonces. key
// must be 64 bytes (S2V key ‖ CTR key).
func NewAESSIV(key []byte) (cipher.AEAD, error) {
	if len(key) != 64 {
		return nil, errors.New("AES-SIV key must be 64 bytes")
	}
	return &sivAEAD{key: append([]byte(nil), key...)}, nil
}

func (s *sivAEAD) NonceSize() int { return 16 }
func (s *sivAEAD) Overhead() int  { return 16 }

func (s *sivAEAD) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if len(nonce) != 16 {
		panic("cryptocore: AES-SIV nonce must be 16 bytes")
	}
	out, err := siv.Encrypt(nil, s.key, plaintext, [][]byte{ad, nonce})
	if err != nil {
		panic("cryptocore: AES-SIV seal: " + err.Error())
	}
	return append(dst, out...)
}

func (s *sivAEAD) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(nonce) != 16 {
		return nil, errors.New("AES-SIV nonce must be 16 bytes")
	}
	out, err := siv.Decrypt(s.key, ciphertext, [][]byte{ad, nonce})
	if err != nil {
		return nil, errors.New("cipher: message authentication failed")
	}
	return append(dst, out...), nil
}

// Wipe clears the key.
func (s *sivAEAD) Wipe() { Wipe(s.key) }
