package nametransform

import (
	"fmt"
	"strings"
)

// EncryptSymlinkTarget returns the string stored as the backing symlink's
// target (docs/format.md 7): the target sealed like content block 0 without file
// ID (AAD = 8 zero bytes) under a fresh random nonce, laid out as
// nonce ‖ AEAD output and base64url-encoded with the name variant. An empty
// target stays empty; with PlaintextNames the target is returned unchanged.
// Results longer than MaxSymlinkTargetLen fail with ErrNameTooLong.
func (n *NameTransform) EncryptSymlinkTarget(target string) (string, error) {
	if n.plaintextNames || target == "" {
		return target, nil
	}
	ns := n.cc.AEAD.NonceSize()
	buf := make([]byte, ns, ns+len(target)+n.cc.AEAD.Overhead())
	n.cc.Nonces.Fill(buf)
	return n.sealSymlink(buf, target)
}

// EncryptSymlinkTargetNonce is EncryptSymlinkTarget with a caller-chosen
// nonce, for reverse mode (see ReverseSymlinkNonce). nonce must have the
// content cipher's nonce size.
func (n *NameTransform) EncryptSymlinkTargetNonce(target string, nonce []byte) (string, error) {
	if n.plaintextNames || target == "" {
		return target, nil
	}
	ns := n.cc.AEAD.NonceSize()
	if len(nonce) != ns {
		return "", fmt.Errorf("symlink nonce is %d bytes, want %d: %w", len(nonce), ns, ErrBadArgument)
	}
	buf := make([]byte, ns, ns+len(target)+n.cc.AEAD.Overhead())
	copy(buf, nonce)
	return n.sealSymlink(buf, target)
}

// sealSymlink encrypts target behind the nonce already in buf and encodes it.
func (n *NameTransform) sealSymlink(buf []byte, target string) (string, error) {
	buf = n.cc.AEAD.Seal(buf, buf, []byte(target), n.zeroAAD[:])
	if l := n.b64.EncodedLen(len(buf)); l > MaxSymlinkTargetLen {
		return "", fmt.Errorf("%w: encrypted symlink target is %d bytes", ErrNameTooLong, l)
	}
	return n.b64.EncodeToString(buf), nil
}

// DecryptSymlinkTarget reverses EncryptSymlinkTarget. Anything that does not
// decode strictly or authenticate fails with ErrBadSymlinkTarget (EIO). An
// empty string stays empty; with PlaintextNames stored is returned
// unchanged.
func (n *NameTransform) DecryptSymlinkTarget(stored string) (string, error) {
	if n.plaintextNames || stored == "" {
		return stored, nil
	}
	if strings.ContainsAny(stored, "\r\n") {
		return "", fmt.Errorf("%w: line break in base64", ErrBadSymlinkTarget)
	}
	buf, err := n.b64.DecodeString(stored)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadSymlinkTarget, err)
	}
	ns := n.cc.AEAD.NonceSize()
	if len(buf) < ns+n.cc.AEAD.Overhead() {
		return "", fmt.Errorf("%w: only %d bytes", ErrBadSymlinkTarget, len(buf))
	}
	pt, err := n.cc.AEAD.Open(buf[ns:ns], buf[:ns], buf[ns:], n.zeroAAD[:])
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadSymlinkTarget, err)
	}
	return string(pt), nil
}
