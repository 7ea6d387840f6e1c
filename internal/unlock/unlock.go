// Package unlock obtains the master key of an existing filesystem from
// what the user gives: a password, a key file or a FIDO2 token that opens
// one of the config's key slots (Open), or the master key itself
// (-masterkey, -zerokey: MasterKey). Both binaries unlock through it,
// gocryptfs (mount, -fsck, -passwd, -addkey, -removekey) and
// gocryptfs-xray -dumpmasterkey, so that a secret opens the same slots in
// both, with the same messages. It also loads the config with its errors
// sorted into the kinds below (LoadConfig), reads key files (ReadKeyFile),
// makes the secret of a new FIDO2 slot (NewFIDO2Secret), and tells whether
// a new secret already opens another slot (SlotTaken).
//
// A typical unlock:
//
//	cf, _, err := unlock.LoadConfig(path)
//	...
//	mk, slot, err := unlock.Open(cf, unlock.Secret{Password: src}, unlock.Options{Logger: log})
//	...
//	defer cryptocore.Wipe(mk)
//
// Contract. Keys and secrets are returned in fresh slices that the caller
// wipes (cryptocore.Wipe); what the package reads itself it wipes. Every
// error wraps exactly one of the kinds ErrConfig, ErrConfigRefused,
// ErrNoSlot, ErrSecret, ErrWrongSecret, ErrKDF and ErrFIDO2 (test with
// errors.Is), except MasterKey's, which are readpassword's (ErrMasterKey,
// ErrPassword); an error's message is the sentence the user sees. The
// package never exits and picks no exit code: each binary maps the kinds
// to its codes (docs/cli.md 7 and 9). The package words no warning
// either: a slot skipped as damaged is reported to Options.Skipped, and
// the caller says it. Its informational messages go to the logger given
// (nil discards them), with constant texts; a password prompt and the
// FIDO2 tools' output go to the Source's and fido2.Options' writers.
//
// Concurrency. The package keeps no state. The calls block while a secret
// is read (a terminal prompt, an -extpass program, a FIDO2 touch) and
// while the KDF runs (up to seconds and the slot's memory cost per slot
// tried). Open and SlotTaken only read the ConfFile, but configfile does
// not promise that a ConfFile may be shared between goroutines, so make
// one call at a time per ConfFile; calls on different configs may run
// concurrently.
package unlock

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
)

// The kinds of error. Exit codes are given for gocryptfs (docs/cli.md 7);
// gocryptfs-xray has its own for some (docs/cli.md 9).
var (
	// ErrConfig: the config file cannot be read or parsed (exit 11).
	ErrConfig = errors.New("cannot open the config file")
	// ErrConfigRefused: the config, or every key slot that fits the
	// secret, is refused by the checks of docs/format.md 2.3 (exit 27).
	ErrConfigRefused = errors.New("config file refused")
	// ErrNoSlot: the config has no key slot for the kind of secret given
	// (exit 1).
	ErrNoSlot = errors.New("no key slot for this kind of secret")
	// ErrSecret: the password or key file could not be read, or is empty
	// or too long (exit 9). Password errors keep readpassword's kinds too.
	ErrSecret = errors.New("cannot read the secret")
	// ErrWrongSecret: the secret opens no key slot (exit 12).
	ErrWrongSecret = errors.New("the secret opens no key slot")
	// ErrKDF: the slots' KDF parameters are too weak, or over this
	// machine's budget in every slot that fits (exit 13).
	ErrKDF = errors.New("key derivation parameters refused")
	// ErrFIDO2: the FIDO2 token or its tools failed (exit 31). It is
	// fido2.ErrFIDO2, which that package's errors wrap.
	ErrFIDO2 = fido2.ErrFIDO2
)

// kindError is an error of one of the kinds: its message is err's, and
// errors.Is finds both the kind and what err wraps.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// wrap gives err the kind.
func wrap(kind, err error) error { return &kindError{kind, err} }

// errorf formats a user message into an error of the kind.
func errorf(kind error, format string, a ...any) error {
	return wrap(kind, fmt.Errorf(format, a...))
}

// causeError is a message of gocryptfs's wording around the error of the
// layer below (configfile's), which Cause returns.
type causeError struct {
	msg   string
	cause error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }

// withCause gives cause the kind and gocryptfs's message for it.
func withCause(kind, cause error, format string, a ...any) error {
	return wrap(kind, Reword(cause, fmt.Sprintf(format, a...)))
}

// Reword returns err with the text msg, keeping what errors.Is finds in
// it; Cause of the result is err (gocryptfs-xray words the errors of this
// package as it always has).
func Reword(err error, msg string) error { return &causeError{msg, err} }

// Cause returns the error of the layer below (configfile's) that an error
// of LoadConfig or Open words for gocryptfs, or err itself: the words
// gocryptfs-xray has always printed (docs/cli.md 9).
func Cause(err error) error {
	var c *causeError
	if errors.As(err, &c) {
		return c.cause
	}
	return err
}

// Secret is what the user gave to open a key slot. Its kind of slot is
// FIDO2 when FIDO2Device is set, else a key file when KeyFile is set,
// else a password.
type Secret struct {
	// Password reads the password (readpassword.Source.Once: -passfile,
	// -extpass, a line of stdin or the terminal).
	Password *readpassword.Source
	// KeyFile is the path of a key file; the whole file is the secret.
	KeyFile string
	// FIDO2Device is the FIDO2 token's device; each FIDO2 slot's
	// credential is asked for its hmac-secret.
	FIDO2Device string
	// FIDO2 is where the fido2 tools' output and notices go.
	FIDO2 fido2.Options
}

// Kind is the kind of key slot that s opens.
func (s Secret) Kind() configfile.SlotKind {
	switch {
	case s.FIDO2Device != "":
		return configfile.SlotFIDO2
	case s.KeyFile != "":
		return configfile.SlotKeyFile
	}
	return configfile.SlotPassword
}

// Options tune Open.
type Options struct {
	// Logger receives "Decrypting master key" once the secret is read;
	// nil discards it.
	Logger *slog.Logger
	// Skipped, if non-nil, is told each slot of the secret's kind that
	// is not tried because it is damaged or its KDF is over this
	// machine's budget, with the reason; the next slot is tried. The
	// caller words the warning (docs/cli.md 3.5: "Key slot N skipped: …").
	Skipped func(slot int, err error)
	// NoSlotHint ends the message of a config without a slot of the
	// secret's kind: which flags give the other kinds, e.g. "use -keyfile
	// or -fido2 accordingly.".
	NoSlotHint string
}

// Open reads the secret and opens the first key slot of its kind in cf
// that it fits. It returns the master key and the slot's index. Nothing is
// read when cf has no slot of that kind (ErrNoSlot). A wrong secret is
// ErrWrongSecret ("Password incorrect.", or for a key file "The key file
// does not unlock any slot."); when every fitting slot is damaged,
// ErrConfigRefused; when every one has weak or over-budget KDF costs,
// ErrKDF. Each slot skipped as damaged or over budget is passed to
// o.Skipped, and the next one is tried.
func Open(cf *configfile.ConfFile, s Secret, o Options) ([]byte, int, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kind := s.Kind()
	if !cf.HasSlotKind(kind) {
		if cf.HasSlotKind(configfile.SlotFIDO2) && kind == configfile.SlotPassword {
			return nil, -1, errorf(ErrNoSlot, "Masterkey encrypted using FIDO2 token; need to use the -fido2 option.")
		}
		msg := fmt.Sprintf("This filesystem has no %s key slot (it has: %v)", kind, cf.SlotKinds())
		if o.NoSlotHint != "" {
			msg += "; " + o.NoSlotHint
		}
		return nil, -1, wrap(ErrNoSlot, errors.New(msg))
	}
	secret, wipe, err := secretFunc(s)
	if err != nil {
		return nil, -1, err
	}
	defer wipe()
	log.Info("Decrypting master key")
	mk, slot, err := cf.UnlockWith(kind, secret, configfile.UnlockOptions{Skipped: o.Skipped})
	if err != nil {
		return nil, -1, openError(cf, kind, err)
	}
	return mk, slot, nil
}

// secretFunc reads the password or key file of s once (a FIDO2 token is
// asked per slot, for that slot's credential) and returns what gives
// each slot its secret, and what wipes the one read.
func secretFunc(s Secret) (configfile.SecretFunc, func(), error) {
	if s.Kind() == configfile.SlotFIDO2 {
		return func(_ int, ks *configfile.KeySlot) ([]byte, error) {
			return fido2.Secret(s.FIDO2Device, ks.FIDO2.CredentialID, ks.FIDO2.HMACSalt, ks.FIDO2.AssertOptions, s.FIDO2)
		}, func() {}, nil
	}
	var data []byte
	var err error
	if s.Kind() == configfile.SlotKeyFile {
		data, err = ReadKeyFile(s.KeyFile)
	} else if s.Password == nil {
		err = errorf(ErrSecret, "no password source")
	} else if data, err = s.Password.Once(); err != nil {
		err = wrap(ErrSecret, err)
	}
	if err != nil {
		return nil, nil, err
	}
	return func(int, *configfile.KeySlot) ([]byte, error) { return bytes.Clone(data), nil },
		func() { cryptocore.Wipe(data) }, nil
}

// errKeyFileUnlocksNothing is the message of a key file that opens no
// slot, worded like the wrong password's, which a user sees beside it.
//
//lint:ignore ST1005 a sentence for the user, like configfile.ErrWrongPassword
var errKeyFileUnlocksNothing = errors.New("The key file does not unlock any slot.")

// openError sorts a failure of UnlockWith into the kinds.
func openError(cf *configfile.ConfFile, kind configfile.SlotKind, err error) error {
	switch {
	case errors.Is(err, fido2.ErrFIDO2):
		return err
	case errors.Is(err, configfile.ErrInvalid):
		return withCause(ErrConfigRefused, err, "Config file %s: %v", cf.Path(), err)
	case errors.Is(err, configfile.ErrWrongPassword) && kind == configfile.SlotKeyFile:
		return wrap(ErrWrongSecret, errKeyFileUnlocksNothing)
	case errors.Is(err, configfile.ErrWrongPassword):
		return wrap(ErrWrongSecret, configfile.ErrWrongPassword)
	case errors.Is(err, configfile.ErrScryptParams), errors.Is(err, configfile.ErrKDFBudget):
		return wrap(ErrKDF, err)
	}
	return withCause(ErrWrongSecret, err, "could not unlock the master key: %v", err)
}
