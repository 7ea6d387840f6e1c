package main

import (
	"errors"
	"fmt"
	"os"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/exitcodes"
)

// checkCipherDir requires CIPHERDIR to exist and be a directory (exit 6).
func checkCipherDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return exitcodes.Errorf(exitcodes.CipherDir, "Invalid cipherdir: %v", err)
	}
	if !fi.IsDir() {
		return exitcodes.Errorf(exitcodes.CipherDir, "Invalid cipherdir: %s is not a directory", dir)
	}
	return nil
}

// loadConfig loads and validates the config for mounting and -passwd:
// unreadable or malformed files give exit 11 ("Cannot open config file"),
// configs refused by validation exit 27.
//
// It also returns the bytes it parsed and the stat of the file read: a
// reverse mount shows exactly those as the view's gocryptfs.conf.
func loadConfig(path string) (*configfile.ConfFile, *configfile.Raw, error) {
	cf, raw, err := configfile.LoadRaw(path)
	if err == nil {
		return cf, raw, nil
	}
	switch {
	case errors.Is(err, configfile.ErrTooOld):
		return nil, nil, exitcodes.Errorf(exitcodes.DeprecatedFS,
			"Filesystem too old for this gocryptfs version: %v", err)
	case errors.Is(err, configfile.ErrInvalid):
		return nil, nil, exitcodes.Errorf(exitcodes.DeprecatedFS, "Config file %s is not supported: %v", path, err)
	}
	return nil, nil, exitcodes.Errorf(exitcodes.Other, "Cannot open config file: %v", err)
}

// errKeyFileUnlocksNothing is the message of a key file that opens no
// slot, worded like the wrong password's, which a user sees beside it.
//
//lint:ignore ST1005 a sentence for the user, like configfile.ErrWrongPassword
var errKeyFileUnlocksNothing = errors.New("The key file does not unlock any slot.")

// unlockError maps a failure to unlock with a secret of kind to exit 12
// ("Password incorrect.", or for a key file that it opens no slot: the
// user gave a file, not a password) or, for weak scrypt parameters or KDF
// costs over the budget, 13.
func unlockError(kind configfile.SlotKind, err error) error {
	switch {
	case errors.Is(err, configfile.ErrWrongPassword) && kind == configfile.SlotKeyFile:
		return exitcodes.New(exitcodes.PasswordIncorrect, errKeyFileUnlocksNothing)
	case errors.Is(err, configfile.ErrWrongPassword):
		return exitcodes.New(exitcodes.PasswordIncorrect, configfile.ErrWrongPassword)
	case errors.Is(err, configfile.ErrScryptParams), errors.Is(err, configfile.ErrKDFBudget):
		return exitcodes.New(exitcodes.ScryptParams, err)
	}
	return exitcodes.New(exitcodes.PasswordIncorrect, fmt.Errorf("could not unlock the master key: %w", err))
}
