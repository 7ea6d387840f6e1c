// Package fscore builds the format core of one filesystem from its master
// key: the CryptoCore (the keys and ciphers derived from the master key),
// and on top of it the NameTransform (file names, symlink targets, xattrs)
// and the ContentEnc (file contents). Both FUSE frontends, -fsck and
// -fsck -repair work on this core, and the tests build theirs here too
// (internal/testutil/coretest), so that what they test is put together
// the way the binary puts it together.
//
// Contract: New takes the parameters of the filesystem (from the config's
// feature flags, configfile.Features, or from the command line) and
// returns the three parts or an error that wraps one of ErrCiphers,
// ErrNames or ErrContent, whose message is the user's. New does not keep
// or wipe the master key; the caller wipes it, and wipes Core.CC when it
// is done with the filesystem.
//
// Concurrency: the package has no state, so New may run concurrently. The
// parts of a Core are safe for concurrent use as their packages say.
package fscore

import (
	"errors"
	"fmt"
	"log/slog"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

// Errors of New, by step. Their text begins the message the user sees,
// followed by the cause.
var (
	// ErrCiphers: the ciphers could not be set up with the given cipher
	// and backend (a setting the user chose: exit 1 on the command line).
	//
	//lint:ignore ST1005 the start of a sentence for the user
	ErrCiphers = errors.New("Cannot set up the ciphers")
	// ErrNames: name encryption refused its options (-longnamemax or a
	// -badname pattern: exit 1).
	//
	//lint:ignore ST1005 the start of a sentence for the user
	ErrNames = errors.New("Cannot set up name encryption")
	// ErrContent: content encryption refused the CryptoCore, which does
	// not happen with one that New built (an internal error).
	//
	//lint:ignore ST1005 the start of a sentence for the user
	ErrContent = errors.New("Cannot set up content encryption")
)

// Options are the parameters of the filesystem and how to run it.
type Options struct {
	// Cipher is the content cipher.
	Cipher cryptocore.ContentCipher
	// Backend is the AEAD implementation asked for (-openssl). AES-SIV
	// has no OpenSSL implementation, so with AES-SIV BackendOpenSSL
	// falls back to Go.
	Backend cryptocore.Backend
	// HKDF derives the subkeys with HKDF.
	HKDF bool
	// Names are the options of name encryption (Logger included).
	Names nametransform.Options
	// Logger receives debug messages of the setup and of content
	// encryption; nil discards them.
	Logger *slog.Logger
}

// Core is the format core of one filesystem.
type Core struct {
	// CC holds the keys; the caller wipes it (CC.Wipe) when done.
	CC *cryptocore.CryptoCore
	// NT encrypts and decrypts names.
	NT *nametransform.NameTransform
	// CE encrypts and decrypts file content blocks.
	CE *contentenc.ContentEnc
}

// New derives the core of a filesystem from its master key mk (which it
// does not keep: the caller wipes it after New returns).
func New(mk []byte, o Options) (Core, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	backend := o.Backend
	if o.Cipher == cryptocore.AESSIV && backend == cryptocore.BackendOpenSSL {
		log.Debug("AES-SIV has no OpenSSL implementation, using Go")
		backend = cryptocore.BackendGo
	}
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: o.Cipher, Backend: backend, HKDF: o.HKDF})
	if err != nil {
		return Core{}, fmt.Errorf("%w: %w", ErrCiphers, err)
	}
	nt, err := nametransform.New(cc, o.Names)
	if err != nil {
		cc.Wipe()
		return Core{}, fmt.Errorf("%w: %w", ErrNames, err)
	}
	ce, err := contentenc.New(cc, contentenc.Options{Logger: o.Logger})
	if err != nil {
		cc.Wipe()
		return Core{}, fmt.Errorf("%w: %w", ErrContent, err)
	}
	return Core{CC: cc, NT: nt, CE: ce}, nil
}
