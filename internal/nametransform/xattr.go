package nametransform

import (
	"fmt"
	"strings"
)

// IsACLName reports whether name is one of the two POSIX ACL attributes,
// which are stored unencrypted (name and value) under their own names.
func IsACLName(name string) bool {
	return name == ACLAccess || name == ACLDefault
}

// EncryptXattrName returns the backing name of the extended attribute name
// (docs/format.md 8): XattrPrefix followed by base64url(EME(pad16(name))) with
// the fixed tweak XattrNameTweak. The full name including its namespace is
// encrypted, also in PlaintextNames mode. ACL names are returned unchanged.
// Empty names and names containing NUL fail with ErrInvalidName; names too
// long for EME with ErrNameTooLong.
func (n *NameTransform) EncryptXattrName(name string) (string, error) {
	if IsACLName(name) {
		return name, nil
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%w: xattr name %q", ErrInvalidName, name)
	}
	if len(name) >= maxEMEBytes {
		return "", fmt.Errorf("%w: xattr name of %d bytes", ErrNameTooLong, len(name))
	}
	ct := n.cc.EME.Encrypt(n.xattrTweak[:], pad16(make([]byte, 0, len(name)+16), name))
	return XattrPrefix + n.b64.EncodeToString(ct), nil
}

// DecryptXattrName reverses EncryptXattrName. ACL names are returned
// unchanged. Names without XattrPrefix, and encrypted names that decrypt to
// an ACL name (a legacy artefact), fail with ErrHiddenXattr; undecryptable
// ones with ErrBadName.
func (n *NameTransform) DecryptXattrName(stored string) (string, error) {
	if IsACLName(stored) {
		return stored, nil
	}
	enc, ok := strings.CutPrefix(stored, XattrPrefix)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrHiddenXattr, stored)
	}
	plain, why := n.decryptEME(enc, n.xattrTweak[:], n.b64.EncodedLen(maxEMEBytes))
	if why != "" {
		return "", fmt.Errorf("%w: xattr name %q: %s", ErrBadName, stored, why)
	}
	for _, c := range plain {
		if c == 0 {
			return "", fmt.Errorf("%w: xattr name %q contains NUL", ErrBadName, stored)
		}
	}
	name := string(plain)
	if IsACLName(name) {
		return "", fmt.Errorf("%w: encrypted ACL name %q", ErrHiddenXattr, name)
	}
	return name, nil
}

// EncryptXattrValue seals an xattr value like content block 0 without file
// ID (AAD = 8 zero bytes) under a fresh random nonce and returns the raw
// nonce ‖ AEAD output (not base64). An empty value stays empty. ACL values
// are not encrypted: callers pass them through.
func (n *NameTransform) EncryptXattrValue(v []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	ns := n.cc.AEAD.NonceSize()
	buf := make([]byte, ns, ns+len(v)+n.cc.AEAD.Overhead())
	n.cc.Nonces.Fill(buf)
	return n.cc.AEAD.Seal(buf, buf, v, n.zeroAAD[:])
}

// EncryptXattrValueNonce is EncryptXattrValue with a caller-chosen nonce,
// for reverse mode (see ReverseXattrNonce).
func (n *NameTransform) EncryptXattrValueNonce(v, nonce []byte) ([]byte, error) {
	ns := n.cc.AEAD.NonceSize()
	if len(nonce) != ns {
		return nil, fmt.Errorf("xattr nonce is %d bytes, want %d: %w", len(nonce), ns, ErrBadArgument)
	}
	if len(v) == 0 {
		return []byte{}, nil
	}
	buf := make([]byte, ns, ns+len(v)+n.cc.AEAD.Overhead())
	copy(buf, nonce)
	return n.cc.AEAD.Seal(buf, buf, v, n.zeroAAD[:]), nil
}

// DecryptXattrValue reverses EncryptXattrValue; stored is not modified. If
// the raw value does not authenticate, it is retried as base64 (name
// variant), the way very old filesystems stored values. Failure of both
// yields ErrBadXattrValue (EIO). An empty value stays empty.
func (n *NameTransform) DecryptXattrValue(stored []byte) ([]byte, error) {
	if len(stored) == 0 {
		return []byte{}, nil
	}
	v, err := n.openValue(stored)
	if err == nil {
		return v, nil
	}
	if dec, derr := n.b64.DecodeString(string(stored)); derr == nil {
		if v, lerr := n.openValue(dec); lerr == nil {
			n.log.Debug("xattr value decrypted via legacy base64 fallback")
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: %v", ErrBadXattrValue, err)
}

func (n *NameTransform) openValue(stored []byte) ([]byte, error) {
	ns := n.cc.AEAD.NonceSize()
	if len(stored) < ns+n.cc.AEAD.Overhead() {
		return nil, fmt.Errorf("only %d bytes", len(stored))
	}
	// A fresh destination: Open wipes its output on failure, and stored is
	// still needed for the fallback.
	return n.cc.AEAD.Open(nil, stored[:ns], stored[ns:], n.zeroAAD[:])
}
