// Package exitcodes defines the process exit codes of gocryptfs (docs/cli.md
// section 7) and an error type that carries one. Only package main uses it:
// the internal packages return (wrapped) sentinel errors, and main decides
// the exit code and calls os.Exit.
package exitcodes

import (
	"errors"
	"fmt"
)

// Exit codes of docs/cli.md section 7. Their numeric values are part of the
// command-line contract (scripts test them), so they must never change.
// The reference also defines 16, 22, 23 and 30, which this implementation
// never returns; they stay reserved.
const (
	// Success is returned after a clean run, also after an external unmount.
	Success = 0
	// Usage means bad flags, wrong argument count or conflicting options.
	Usage = 1
	// CipherDir means CIPHERDIR is missing, not a directory or (on -init) not empty.
	CipherDir = 6
	// Init means the root gocryptfs.diriv or the .bak copy could not be
	// written, the reverse config already exists or -config is invalid.
	Init = 7
	// LoadConf means -info (or xray -dumpmasterkey) could not load the config.
	LoadConf = 8
	// ReadPassword means the password could not be obtained (empty, extpass
	// failure, unreadable passfile, mismatch on init).
	ReadPassword = 9
	// MountPoint means MOUNTPOINT is invalid, not empty, or overlaps CIPHERDIR.
	MountPoint = 10
	// Other is any error without a more specific code.
	Other = 11
	// PasswordIncorrect means the master key could not be unwrapped.
	PasswordIncorrect = 12
	// ScryptParams means weak scrypt parameters at key derivation time.
	ScryptParams = 13
	// MasterKey means -masterkey is not 32 bytes of valid hex.
	MasterKey = 14
	// SigInt means the process was terminated by SIGINT/SIGTERM after unmounting.
	SigInt = 15
	// ForkChild means the background child could not be started.
	ForkChild = 17
	// OpenSSL means OpenSSL was requested but is not compiled in.
	OpenSSL = 18
	// FuseNewServer means the FUSE mount itself failed.
	FuseNewServer = 19
	// CtlSock means the control socket could not be created.
	CtlSock = 20
	// WriteConf means the config file could not be written.
	WriteConf = 24
	// Profiler means a profiling output file could not be created.
	Profiler = 25
	// FsckErrors means -fsck found problems.
	FsckErrors = 26
	// DeprecatedFS means the config was rejected by validation.
	DeprecatedFS = 27
	// ExcludeError means -exclude in forward mode or an unreadable -exclude-from file.
	ExcludeError = 29
	// FIDO2Error means the FIDO2 token interaction failed.
	FIDO2Error = 31
)

// Error is an error that tells main which exit code to use.
type Error struct {
	// Code is the process exit code.
	Code int
	// Err is the underlying error; it may be nil for a bare exit code.
	Err error
}

// Error returns the message of the wrapped error.
func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap gives errors.Is/As access to the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// New returns an error carrying code. err may be nil, meaning "exit with
// this code, the message has already been printed".
func New(code int, err error) error {
	return &Error{Code: code, Err: err}
}

// Errorf formats a message into an error carrying code.
func Errorf(code int, format string, a ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, a...)}
}

// From returns the exit code for err: 0 for nil, the code of the outermost
// *Error in the chain, or Other for errors that carry no code.
func From(err error) int {
	if err == nil {
		return Success
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Other
}

// Silent reports whether err carries no message of its own (New(code, nil)),
// so main should exit without printing anything.
func Silent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Err == nil
}
