package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
)

// dumpMasterKey unlocks the config at path with a password read from stdin
// (one line) or the terminal, or with the FIDO2 token at fido2Device, and
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
	var pw []byte
	if cf.IsFeatureFlagSet(configfile.FlagFIDO2) {
		if fido2Device == "" {
			fmt.Fprintln(stderr, "Masterkey encrypted using FIDO2 token; need to use the -fido2 option.")
			return exitUsage
		}
		if cf.FIDO2 == nil {
			fmt.Fprintln(stderr, "Config has the FIDO2 flag but no FIDO2 parameters")
			return exitInvalidCfg
		}
		pw, err = fido2.Secret(fido2Device, cf.FIDO2.CredentialID, cf.FIDO2.HMACSalt, cf.FIDO2.AssertOptions,
			fido2.Options{Stderr: stderr})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitFIDO2
		}
	} else {
		src := &readpassword.Source{Stdin: stdin, Stderr: stderr}
		if pw, err = src.Interactive(false); err != nil {
			fmt.Fprintln(stderr, err)
			return exitPassword
		}
	}
	mk, err := cf.DecryptMasterKey(pw)
	cryptocore.Wipe(pw)
	if err != nil {
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
