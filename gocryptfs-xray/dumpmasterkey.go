package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
)

// dumpMasterKey unlocks the config at path (any of its password key
// slots) with a password read from stdin (one line) or the terminal, or
// (its FIDO2 slots) with the FIDO2 token at fido2Device, and
// prints the master key as 64 lower-case hex digits (docs/cli.md 9).
func dumpMasterKey(path, fido2Device string, stdin io.Reader, stdout, stderr io.Writer) int {
	cf, err := configfile.Load(path)
	if err != nil {
		fmt.Fprintf(stderr, "Cannot open config file: %v\n", err)
		if errors.Is(err, configfile.ErrInvalid) {
			return exitInvalidCfg
		}
		return exitOther
	}
	// Any key slot opens: a FIDO2 slot with -fido2 (when the config has
	// one), else a password slot.
	kind := configfile.SlotPassword
	if fido2Device != "" && cf.HasSlotKind(configfile.SlotFIDO2) {
		kind = configfile.SlotFIDO2
	}
	if !cf.HasSlotKind(kind) {
		if cf.HasSlotKind(configfile.SlotFIDO2) {
			fmt.Fprintln(stderr, "Masterkey encrypted using FIDO2 token; need to use the -fido2 option.")
		} else {
			fmt.Fprintf(stderr, "The config has no %s key slot.\n", kind)
		}
		return exitUsage
	}
	var secret configfile.SecretFunc
	if kind == configfile.SlotFIDO2 {
		secret = func(_ int, s *configfile.KeySlot) ([]byte, error) {
			return fido2.Secret(fido2Device, s.FIDO2.CredentialID, s.FIDO2.HMACSalt, s.FIDO2.AssertOptions, fido2.Options{Stderr: stderr})
		}
	} else {
		src := &readpassword.Source{Stdin: stdin, Stderr: stderr}
		pw, err := src.Interactive(false)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitPassword
		}
		defer cryptocore.Wipe(pw)
		secret = func(int, *configfile.KeySlot) ([]byte, error) { return bytes.Clone(pw), nil }
	}
	mk, _, err := cf.Unlock(kind, secret)
	switch {
	case errors.Is(err, fido2.ErrFIDO2):
		fmt.Fprintln(stderr, err)
		return exitFIDO2
	case errors.Is(err, configfile.ErrInvalid):
		fmt.Fprintln(stderr, err)
		return exitInvalidCfg
	case err != nil:
		fmt.Fprintln(stderr, err) // "Password incorrect." for a wrong password
		return exitLoadConf
	}
	defer cryptocore.Wipe(mk)
	out := make([]byte, hex.EncodedLen(len(mk))+1)
	hex.Encode(out, mk)
	out[len(out)-1] = '\n'
	_, err = stdout.Write(out)
	cryptocore.Wipe(out)
	if err != nil {
		return exitOther
	}
	return exitOK
}
