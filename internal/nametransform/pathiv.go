package nametransform

import (
	"crypto/sha256"
	"path"
)

// Purpose selects which reverse-mode value PathIV derives (docs/format.md 9.1).
// The strings are part of the format.
type Purpose string

// The purposes of docs/format.md 9.1.
const (
	// PurposeDirIV: directory IV (EME tweak) of the directory at the path.
	PurposeDirIV Purpose = "DIRIV"
	// PurposeFileID: file ID in the header of the file at the path.
	PurposeFileID Purpose = "FILEID"
	// PurposeBlock0IV: nonce of content block 0 of the file at the path.
	PurposeBlock0IV Purpose = "BLOCK0IV"
	// PurposeSymlinkIV: symlink target nonce (see ReverseSymlinkNonce).
	PurposeSymlinkIV Purpose = "SYMLINKIV"
	// PurposeXattrIV: xattr value nonce (see ReverseXattrNonce).
	PurposeXattrIV Purpose = "XATTRIV"
)

// PathIV returns the first 16 bytes of SHA-256(cipherPath ‖ 0x00 ‖
// purpose). cipherPath is the ciphertext path relative to the view's root:
// encrypted (or hashed long-name) components joined by "/", no leading or
// trailing slash, "" for the root.
func PathIV(cipherPath string, purpose Purpose) []byte {
	h := sha256.New()
	h.Write([]byte(cipherPath))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	var sum [sha256.Size]byte
	return append([]byte(nil), h.Sum(sum[:0])[:DirIVLen]...)
}

// ReverseSymlinkNonce returns the nonce with which reverse mode encrypts
// the target of the symlink at cipherPath. It reproduces a quirk of the
// reference (docs/format.md 9.5): the link's final component appears twice, so
// link "X" in the root uses the path "X/X" and "D/X" uses "D/X/X". For a
// hashed long name the hashed component is repeated (not verified against
// the reference).
func ReverseSymlinkNonce(cipherPath string) []byte {
	return PathIV(cipherPath+"/"+path.Base(cipherPath), PurposeSymlinkIV)
}

// ReverseXattrNonce returns the nonce with which reverse mode encrypts the
// value of the xattr whose backing name (XattrPrefix...) is storedName on the
// file or directory at cipherPath ("" for the root): PathIV(cipherPath ‖
// 0x00 ‖ storedName, XATTRIV) (docs/format.md 9.6).
func ReverseXattrNonce(cipherPath, storedName string) []byte {
	return PathIV(cipherPath+"\x00"+storedName, PurposeXattrIV)
}
