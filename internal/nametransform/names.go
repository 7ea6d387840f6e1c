package nametransform

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// tweak returns the EME tweak for names in a directory with IV dirIV.
func (n *NameTransform) tweak(dirIV []byte) ([]byte, error) {
	if n.deterministic {
		return n.zeroIV[:], nil
	}
	if len(dirIV) != DirIVLen {
		return nil, fmt.Errorf("nametransform: directory IV is %d bytes, want %d: %w", len(dirIV), DirIVLen, ErrBadArgument)
	}
	return dirIV, nil
}

// checkPlainName enforces docs/format.md 6.7 on a name about to be stored.
func checkPlainName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	case len(name) > NameMax:
		return fmt.Errorf("%w: %d bytes", ErrNameTooLong, len(name))
	case strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

// validDecrypted reports whether a decrypted file name is acceptable (6.7).
func validDecrypted[T string | []byte](b T) bool {
	if len(b) == 0 || len(b) > NameMax {
		return false
	}
	if len(b) <= 2 && (string(b) == "." || string(b) == "..") {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] == '/' || b[i] == 0 {
			return false
		}
	}
	return true
}

// pad16 appends s PKCS#7-padded to a multiple of 16 bytes (6.2) to dst.
func pad16(dst []byte, s string) []byte {
	k := 16 - len(s)%16
	dst = append(dst, s...)
	for i := 0; i < k; i++ {
		dst = append(dst, byte(k))
	}
	return dst
}

// unpad16 strips the padding added by pad16 and reports whether it was
// well-formed. The result is never empty.
func unpad16(b []byte) ([]byte, bool) {
	l := len(b)
	if l == 0 || l%16 != 0 {
		return nil, false
	}
	k := int(b[l-1])
	if k < 1 || k > 16 || k >= l {
		return nil, false
	}
	for _, c := range b[l-k:] {
		if int(c) != k {
			return nil, false
		}
	}
	return b[:l-k], true
}

// EncryptName returns the encrypted (but not hashed) form of the plaintext
// name plain for a directory with IV dirIV: EME over the padded name, then
// base64url. dirIV must be DirIVLen bytes unless DeterministicNames is set,
// in which case it is ignored and may be nil. With PlaintextNames the name is
// returned unchanged. Invalid names fail with ErrInvalidName or
// ErrNameTooLong; "." and ".." are refused too, because frontends resolve
// them themselves.
func (n *NameTransform) EncryptName(plain string, dirIV []byte) (string, error) {
	if err := checkPlainName(plain); err != nil {
		return "", err
	}
	if n.plaintextNames {
		return plain, nil
	}
	tweak, err := n.tweak(dirIV)
	if err != nil {
		return "", err
	}
	var buf [NameMax + 1]byte
	ct := n.cc.EME.Encrypt(tweak, pad16(buf[:0], plain))
	var out [MaxNameFileLen]byte
	l := n.b64.EncodedLen(len(ct))
	n.b64.Encode(out[:l], ct)
	return string(out[:l]), nil
}

// DecryptName reverses EncryptName for one stored name (not a hashed long
// name: resolve those with ReadLongNameAt or use DecryptNameAt). Decoding is
// strict: CR/LF, non-canonical base64, a length that is not a non-zero
// multiple of 16, bad padding and invalid results (6.7) all fail with an
// error wrapping ErrBadName, so every accepted input re-encrypts to itself.
// With PlaintextNames the name is returned unchanged if it is a valid name.
func (n *NameTransform) DecryptName(cipherName string, dirIV []byte) (string, error) {
	if n.plaintextNames {
		if !validDecrypted(cipherName) {
			return "", fmt.Errorf("%w: %q", ErrBadName, cipherName)
		}
		return cipherName, nil
	}
	tweak, err := n.tweak(dirIV)
	if err != nil {
		return "", err
	}
	plain, why := n.decryptName(cipherName, tweak)
	if why != "" {
		return "", fmt.Errorf("%w: %q: %s", ErrBadName, cipherName, why)
	}
	return string(plain), nil
}

// decryptName is DecryptName without the error value, for callers that try
// many candidates (-badname). why is empty on success.
func (n *NameTransform) decryptName(cipherName string, tweak []byte) (plain []byte, why string) {
	plain, why = n.decryptEME(cipherName, tweak, n.maxEncLen)
	if why == "" && !validDecrypted(plain) {
		return nil, "decrypts to an invalid name"
	}
	return plain, why
}

// decryptEME decodes s (at most maxLen characters), EME-decrypts it with
// tweak and removes the padding. The result aliases a fresh buffer. On
// failure why says what was wrong (a constant, so failing is cheap).
func (n *NameTransform) decryptEME(s string, tweak []byte, maxLen int) (plain []byte, why string) {
	if len(s) == 0 || len(s) > maxLen {
		return nil, "bad length"
	}
	// The base64 decoder silently skips CR and LF; refuse them so that only
	// the canonical spelling of a name is accepted.
	if strings.ContainsAny(s, "\r\n") {
		return nil, "line break"
	}
	var small [MaxNameFileLen]byte
	var buf []byte
	if dl := n.b64.DecodedLen(len(s)); dl <= len(small) {
		buf = small[:dl]
	} else {
		buf = make([]byte, dl)
	}
	l, err := n.b64.Decode(buf, []byte(s))
	if err != nil {
		return nil, "invalid base64"
	}
	if l == 0 || l%16 != 0 || l > maxEMEBytes {
		return nil, "decoded length not a multiple of 16"
	}
	plain, ok := unpad16(n.cc.EME.Decrypt(tweak, buf[:l]))
	if !ok {
		return nil, "bad padding"
	}
	return plain, ""
}

// HashLongName returns the backing name of an entry whose encrypted name enc
// is too long: LongNamePrefix followed by the base64url SHA-256 of enc.
func (n *NameTransform) HashLongName(enc string) string {
	sum := sha256.Sum256([]byte(enc))
	var out [64]byte
	l := n.b64.EncodedLen(len(sum))
	n.b64.Encode(out[:l], sum[:])
	return LongNamePrefix + string(out[:l])
}

// HashIfLong returns the name under which an entry with encrypted name enc
// is stored, and whether that is a hashed long name (then the caller must
// also write enc with WriteLongNameAt). With PlaintextNames it returns enc
// unchanged.
func (n *NameTransform) HashIfLong(enc string) (stored string, long bool) {
	if n.plaintextNames || len(enc) <= n.longNameMax {
		return enc, false
	}
	return n.HashLongName(enc), true
}

// EncryptAndHashName returns the backing name of plain in a directory with
// IV dirIV: EncryptName, then HashIfLong. Use it for lookups; creators need
// the unhashed name too and call the two steps themselves.
func (n *NameTransform) EncryptAndHashName(plain string, dirIV []byte) (string, error) {
	enc, err := n.EncryptName(plain, dirIV)
	if err != nil {
		return "", err
	}
	stored, _ := n.HashIfLong(enc)
	return stored, nil
}

// DecryptNameAt decrypts the backing name cipherName of an entry in the
// directory dirfd whose IV is dirIV, reading the companion file first for a
// hashed long name. The hash itself is not checked against the content, as
// in the reference. Companion files, gocryptfs.diriv etc. should have been
// filtered with Classify beforehand; they fail with ErrBadName.
func (n *NameTransform) DecryptNameAt(dirfd int, cipherName string, dirIV []byte) (string, error) {
	if !n.plaintextNames && IsLongContent(cipherName) {
		enc, err := ReadLongNameAt(dirfd, cipherName)
		if err != nil {
			return "", err
		}
		return n.DecryptName(enc, dirIV)
	}
	return n.DecryptName(cipherName, dirIV)
}

// IsLongContent reports whether a backing name is a hashed long name
// ("gocryptfs.longname.<hash>", not its companion file).
func IsLongContent(name string) bool {
	return strings.HasPrefix(name, LongNamePrefix) && !strings.HasSuffix(name, LongNameSuffix)
}

// IsLongNameFile reports whether a backing name is the companion file of a
// hashed long name ("gocryptfs.longname.<hash>.name").
func IsLongNameFile(name string) bool {
	return strings.HasPrefix(name, LongNamePrefix) && strings.HasSuffix(name, LongNameSuffix)
}

// LongNameFilename returns the companion file name of a hashed name.
func LongNameFilename(hashedName string) string {
	return hashedName + LongNameSuffix
}

// Kind classifies a backing directory entry (docs/format.md 6.6-6.8).
type Kind uint8

const (
	// KindName is an ordinary entry: decrypt it with DecryptName (which
	// passes it through in PlaintextNames mode).
	KindName Kind = iota
	// KindLongName is a hashed long name: its encrypted name is in the
	// companion file (DecryptNameAt handles this).
	KindLongName
	// KindLongNameFile is a companion ".name" file: hidden.
	KindLongNameFile
	// KindDirIV is gocryptfs.diriv in a filesystem using directory IVs:
	// hidden.
	KindDirIV
	// KindConfig is gocryptfs.conf in the root directory: hidden.
	KindConfig
	// KindDot is "." or "..": never decrypted, handled by the frontend.
	KindDot
	// KindQuarantine is gocryptfs.quarantine in the root directory, where
	// -fsck -repair keeps the entries it took out: hidden, and never read
	// as filesystem content.
	KindQuarantine
)

// String returns a short name for logs.
func (k Kind) String() string {
	switch k {
	case KindName:
		return "name"
	case KindLongName:
		return "longname"
	case KindLongNameFile:
		return "longname-file"
	case KindDirIV:
		return "diriv"
	case KindConfig:
		return "config"
	case KindDot:
		return "dot"
	case KindQuarantine:
		return "quarantine"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Hidden reports whether entries of this kind never appear in a plaintext
// listing (KindDot is left to the frontend and reported as not hidden).
func (k Kind) Hidden() bool {
	return k == KindLongNameFile || k == KindDirIV || k == KindConfig || k == KindQuarantine
}

// Classify tells what the backing entry cipherName in a directory is;
// isRoot is true for the CIPHERDIR root. In PlaintextNames mode only
// gocryptfs.conf in the root is special; with deterministic names
// gocryptfs.diriv is an ordinary (undecryptable) name.
func (n *NameTransform) Classify(cipherName string, isRoot bool) Kind {
	switch {
	case cipherName == "." || cipherName == "..":
		return KindDot
	case isRoot && cipherName == ConfDefaultName:
		return KindConfig
	case isRoot && cipherName == QuarantineDirName:
		return KindQuarantine
	case n.plaintextNames:
		return KindName
	case cipherName == DirIVFilename && !n.deterministic:
		return KindDirIV
	case IsLongNameFile(cipherName):
		return KindLongNameFile
	case IsLongContent(cipherName):
		return KindLongName
	}
	return KindName
}

// IsHiddenInListing reports whether the backing entry cipherName is never
// shown in a plaintext listing (config, diriv, companion files). Entries that
// merely fail to decrypt are not covered: they are hidden (or shown by
// -badname) after a decryption attempt.
func (n *NameTransform) IsHiddenInListing(cipherName string, isRoot bool) bool {
	return n.Classify(cipherName, isRoot).Hidden()
}

// IsReservedName reports whether the plaintext name plain may not be
// created through the mount: only gocryptfs.conf (EPERM in the reference)
// and gocryptfs.quarantine in the root with PlaintextNames. With encrypted
// names every valid name is allowed, it simply gets an encrypted backing
// name (which can never contain a dot).
func (n *NameTransform) IsReservedName(plain string, isRoot bool) bool {
	return n.plaintextNames && isRoot && (plain == ConfDefaultName || plain == QuarantineDirName)
}
