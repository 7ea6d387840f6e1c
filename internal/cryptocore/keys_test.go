package cryptocore

// Single-key derivations for the tests; New derives all keys of a
// filesystem at once.

// ContentKey derives the content-cipher key from the master key. Without
// HKDF (legacy filesystems) the master key itself is used for AES-GCM and
// SHA-512 of it for AES-SIV; XChaCha20-Poly1305 requires HKDF.
func ContentKey(masterKey []byte, c ContentCipher, useHKDF bool) ([]byte, error) {
	d, err := newDeriver(masterKey, useHKDF)
	if err != nil {
		return nil, err
	}
	defer d.wipe()
	return d.contentKey(c)
}

// NameKey derives the EME key (also used for xattr names).
func NameKey(masterKey []byte, useHKDF bool) ([]byte, error) {
	d, err := newDeriver(masterKey, useHKDF)
	if err != nil {
		return nil, err
	}
	defer d.wipe()
	return d.nameKey(), nil
}
