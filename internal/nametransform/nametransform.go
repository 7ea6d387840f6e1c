// Package nametransform maps plaintext names to the names stored in
// CIPHERDIR and back (docs/format.md sections 6-9): EME-encrypted file names with
// per-directory or zero tweaks, base64 encoding, long-name hashing and the
// companion ".name" files, the gocryptfs.diriv files, encrypted symlink
// targets, encrypted extended-attribute names and values, the display of
// undecryptable names (-badname) and the path-derived IVs of reverse mode.
//
// DecodeDir is the one decoder of a directory listing: which backing
// entries the plaintext view shows and under which names (sync tools'
// conflict copies and alternative directory IVs included, see
// conflict.go), and which it hides and why. The mount, -fsck and -fsck
// -repair all list directories with it.
//
// A NameTransform is immutable after New and safe for concurrent use. The
// file helpers (ReadDirIVAt, WriteLongNameAt, ...) work relative to a
// directory file descriptor and never follow symlinks, so that a path
// component swapped by someone else cannot redirect them.
//
// Errors that callers must tell apart are sentinels (ErrBadName,
// ErrBadDirIV, ...); each one that corresponds to an errno wraps it, so
// errors.Is(err, syscall.EIO) etc. work for the FUSE frontends.
package nametransform

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"syscall"

	"gocryptfs/internal/cryptocore"
)

// Names and limits that are part of the on-disk format (docs/format.md 6, 8, 11).
const (
	// ConfDefaultName is the config file in the CIPHERDIR root; it is hidden
	// from listings in every naming mode.
	ConfDefaultName = "gocryptfs.conf"
	// QuarantineDirName is the directory in the CIPHERDIR root where
	// -fsck -repair moves the entries it replaces or takes out; it is
	// hidden from listings in every naming mode.
	QuarantineDirName = "gocryptfs.quarantine"
	// DirIVFilename holds the 16-byte EME tweak of the directory it is in.
	DirIVFilename = "gocryptfs.diriv"
	// DirIVLen is the length of a directory IV and of every EME tweak.
	DirIVLen = 16
	// LongNamePrefix starts the backing name of an entry whose encrypted name
	// is too long to be stored directly.
	LongNamePrefix = "gocryptfs.longname."
	// LongNameSuffix is appended to a hashed name to get its companion file,
	// which holds the full encrypted name.
	LongNameSuffix = ".name"
	// LongNameMaxDefault is the hashing threshold without the LongNameMax
	// config flag: encrypted names longer than this are hashed.
	LongNameMaxDefault = 255
	// LongNameMaxMin is the smallest accepted threshold; a hashed name itself
	// is 62 characters long.
	LongNameMaxMin = 62
	// NameMax is the longest plaintext name, in bytes.
	NameMax = 255
	// MaxNameFileLen is the largest accepted content of a ".name" file (the
	// padded base64 encoding of a 255-byte name).
	MaxNameFileLen = 344
	// BadNameSuffix marks names shown by -badname (note the leading space).
	BadNameSuffix = " GOCRYPTFS_BAD_NAME"
	// XattrPrefix starts every encrypted extended-attribute name in the
	// backing file.
	XattrPrefix = "user.gocryptfs."
	// XattrNameTweak is the fixed EME tweak for extended-attribute names.
	XattrNameTweak = "xattr_name_iv_xx"
	// ACLAccess and ACLDefault are passed through unencrypted (name and value).
	ACLAccess  = "system.posix_acl_access"
	ACLDefault = "system.posix_acl_default"
	// MaxSymlinkTargetLen is the longest stored (encoded) symlink target
	// accepted when encrypting; longer results fail with ENAMETOOLONG.
	MaxSymlinkTargetLen = 4096
)

// maxEMEBytes is the largest input the EME library accepts (128 blocks);
// only extended-attribute names can get near it.
const maxEMEBytes = 2048

// errnoError is a sentinel error that also matches its errno with errors.Is.
type errnoError struct {
	msg   string
	errno syscall.Errno
}

func (e *errnoError) Error() string { return e.msg }

// Undecryptable reports whether e is ErrBadName. Packages that must tell
// an undecryptable name apart without depending on this one (ctlsock)
// look for this method with errors.As.
func (e *errnoError) Undecryptable() bool { return e == ErrBadName }

func (e *errnoError) Unwrap() error {
	if e.errno == 0 {
		return nil
	}
	return e.errno
}

// Sentinel errors. Returned errors wrap these (test with errors.Is) and add
// context.
var (
	// ErrBadName: a stored file or xattr name cannot be decrypted (invalid
	// base64, wrong length, bad padding, or an invalid plaintext result). In
	// forward mode such entries are hidden and reported by -fsck. It carries
	// no errno on purpose: a lookup should say ENOENT, a listing skips it.
	ErrBadName error = &errnoError{msg: "undecryptable name"}
	// ErrInvalidName: a plaintext name that may not be stored (empty, ".",
	// "..", contains '/' or NUL). Wraps EINVAL.
	ErrInvalidName error = &errnoError{"invalid name", syscall.EINVAL}
	// ErrNameTooLong: a plaintext name longer than NameMax bytes (or an
	// encoded symlink target over MaxSymlinkTargetLen). Wraps ENAMETOOLONG.
	ErrNameTooLong error = &errnoError{"name too long", syscall.ENAMETOOLONG}
	// ErrBadDirIV: a gocryptfs.diriv file that is not a regular file of
	// exactly 16 bytes, not all zero. Wraps EIO.
	ErrBadDirIV error = &errnoError{"invalid " + DirIVFilename, syscall.EIO}
	// ErrBadLongNameFile: a ".name" companion file that is empty, larger than
	// MaxNameFileLen or not a regular file. Wraps EIO.
	ErrBadLongNameFile error = &errnoError{"invalid long name file", syscall.EIO}
	// ErrBadSymlinkTarget: a stored symlink target that fails to decode or
	// authenticate. Wraps EIO (readlink fails with EIO).
	ErrBadSymlinkTarget error = &errnoError{"undecryptable symlink target", syscall.EIO}
	// ErrBadXattrValue: a stored xattr value that fails to authenticate,
	// also after the legacy base64 fallback. Wraps EIO.
	ErrBadXattrValue error = &errnoError{"undecryptable xattr value", syscall.EIO}
	// ErrHiddenXattr: a backing xattr name that is not shown through the
	// mount: it lacks XattrPrefix, or it decrypts to an ACL name (a legacy
	// artefact). Listings skip these silently.
	ErrHiddenXattr error = &errnoError{msg: "xattr not visible through the mount"}
	// ErrBadArgument: a programming error by the caller (wrong IV or nonce
	// length, hashed name not matching its content). Wraps EINVAL.
	ErrBadArgument error = &errnoError{"bad argument", syscall.EINVAL}
)

// Options selects the naming mode; the fields mirror the config feature
// flags (docs/format.md 2.3). The zero value is a legacy filesystem with padded
// base64 and per-directory IVs.
type Options struct {
	// PlaintextNames stores names and symlink targets unchanged. Xattr names
	// and values are still encrypted.
	PlaintextNames bool
	// DeterministicNames uses a zero EME tweak in every directory instead of
	// gocryptfs.diriv (config without the DirIV flag).
	DeterministicNames bool
	// Raw64 selects unpadded base64url; otherwise padded base64url.
	Raw64 bool
	// LongNameMax is the hashing threshold (62..255); 0 means 255. Like the
	// reference, hashing does not depend on the LongNames flag: a name that
	// needs it could not exist on a filesystem without the flag anyway.
	LongNameMax int
	// BadnamePatterns are -badname globs (path.Match syntax) matched against
	// whole ciphertext names.
	BadnamePatterns []string
	// Logger receives debug messages; nil discards them.
	Logger *slog.Logger
}

// NameTransform performs all name, symlink and xattr transformations of
// one filesystem. Create it with New.
type NameTransform struct {
	cc             *cryptocore.CryptoCore
	b64            *base64.Encoding // strict, raw or padded b64url
	plaintextNames bool
	deterministic  bool
	longNameMax    int
	badname        []string
	log            *slog.Logger

	// Read-only after New.
	zeroIV     [DirIVLen]byte
	xattrTweak [DirIVLen]byte
	zeroAAD    [8]byte
	maxEncLen  int // encoded length of a 256-byte EME output
	minBadLen  int // encoded length of one AES block
}

// New returns a NameTransform using the EME and content ciphers of cc.
// It fails for a LongNameMax outside 62..255 and for malformed -badname
// patterns.
func New(cc *cryptocore.CryptoCore, opts Options) (*NameTransform, error) {
	if cc == nil || cc.EME == nil || cc.AEAD == nil || cc.Nonces == nil {
		return nil, errors.New("nametransform: incomplete CryptoCore")
	}
	max := opts.LongNameMax
	if max == 0 {
		max = LongNameMaxDefault
	}
	if max < LongNameMaxMin || max > LongNameMaxDefault {
		return nil, fmt.Errorf("nametransform: LongNameMax %d outside %d..%d", opts.LongNameMax, LongNameMaxMin, LongNameMaxDefault)
	}
	for _, p := range opts.BadnamePatterns {
		// path.Match checks the whole pattern even when the name does not match.
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("nametransform: invalid -badname pattern %q: %w", p, err)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &NameTransform{
		cc:             cc,
		plaintextNames: opts.PlaintextNames,
		deterministic:  opts.DeterministicNames,
		longNameMax:    max,
		badname:        append([]string(nil), opts.BadnamePatterns...),
		log:            log,
	}
	if opts.Raw64 {
		n.b64 = base64.RawURLEncoding.Strict()
	} else {
		n.b64 = base64.URLEncoding.Strict()
	}
	copy(n.xattrTweak[:], XattrNameTweak)
	n.maxEncLen = n.b64.EncodedLen(NameMax + 1)
	n.minBadLen = n.b64.EncodedLen(16)
	return n, nil
}

// PlaintextNames reports whether names are stored unencrypted.
func (n *NameTransform) PlaintextNames() bool { return n.plaintextNames }

// DeterministicNames reports whether names use the zero tweak (no
// gocryptfs.diriv files).
func (n *NameTransform) DeterministicNames() bool { return n.deterministic }

// UsesDirIV reports whether directories carry a gocryptfs.diriv file: true
// unless names are plaintext or deterministic.
func (n *NameTransform) UsesDirIV() bool { return !n.plaintextNames && !n.deterministic }

// LongNameMax returns the effective hashing threshold.
func (n *NameTransform) LongNameMax() int { return n.longNameMax }

// B64 returns the base64 variant used for names, symlink targets and xattr
// names (strict: non-canonical input is rejected). Callers must not modify
// it.
func (n *NameTransform) B64() *base64.Encoding { return n.b64 }
