package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
	"gocryptfs/internal/unlock"
)

// dumpMasterKey unlocks the config at path like gocryptfs does (package
// unlock): a key-file slot with -keyfile, a FIDO2 slot with -fido2 (when
// the config has one), else a password slot with a password read from
// stdin (one line) or the terminal. It prints the master key as 64
// lower-case hex digits (docs/cli.md 9) and returns the exit code.
func dumpMasterKey(path string, o options, stdin io.Reader, stdout, stderr io.Writer) int {
	mk, err := unlockConfig(path, o, stdin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return unlockExitCode(err)
	}
	defer cryptocore.Wipe(mk)
	out := make([]byte, hex.EncodedLen(len(mk))+1)
	hex.Encode(out, mk)
	out[len(out)-1] = '\n'
	_, err = stdout.Write(out)
	cryptocore.Wipe(out)
	if err != nil {
		return exitcodes.Other
	}
	return exitcodes.Success
}

// unlockConfig loads the config at path and opens it with the secret of
// the flags; the caller wipes the master key.
//
// Its errors are worded as xray has always worded them (configfile's
// error, after "Cannot open config file: " for one that cannot be
// loaded), not as the mount words them.
func unlockConfig(path string, o options, stdin io.Reader, stderr io.Writer) ([]byte, error) {
	cf, _, err := unlock.LoadConfig(path)
	if err != nil {
		return nil, unlock.Reword(err, unlock.CannotOpen(err))
	}
	s := unlock.Secret{
		Password: &readpassword.Source{Stdin: stdin, Stderr: stderr},
		KeyFile:  o.keyfile,
		FIDO2:    fido2.Options{Stderr: stderr},
	}
	// -fido2 counts where the config has a FIDO2 slot; elsewhere the
	// password opens it.
	if o.fido2 != "" && cf.HasSlotKind(configfile.SlotFIDO2) {
		s.FIDO2Device = o.fido2
	}
	mk, _, err := unlock.Open(cf, s, unlock.Options{})
	switch {
	case err == nil:
		return mk, nil
	case errors.Is(err, unlock.ErrNoSlot) && !(s.Kind() == configfile.SlotPassword && cf.HasSlotKind(configfile.SlotFIDO2)):
		return nil, unlock.Reword(err, fmt.Sprintf("The config has no %s key slot.", s.Kind()))
	}
	return nil, unlock.Reword(err, unlock.Cause(err).Error())
}

// unlockExitCode is the exit code of a failed -dumpmasterkey (docs/cli.md
// 9): the codes of a mount, except that a secret that does not unlock the
// config, for whatever reason, is 8.
func unlockExitCode(err error) int {
	switch {
	case errors.Is(err, unlock.ErrFIDO2):
		return exitcodes.FIDO2Error
	case errors.Is(err, unlock.ErrConfigRefused):
		return exitcodes.DeprecatedFS
	case errors.Is(err, unlock.ErrConfig):
		return exitcodes.Other
	case errors.Is(err, unlock.ErrNoSlot):
		return exitcodes.Usage
	case errors.Is(err, unlock.ErrSecret):
		return exitcodes.ReadPassword
	}
	return exitcodes.LoadConf
}
