package main

import (
	"path/filepath"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fido2"
)

// initPassword returns the scrypt input for -init: with -fido2 a new
// credential is registered on the token (user name = CIPHERDIR's base name)
// and its hmac-secret for a fresh salt is used, and the parameters to
// store in the config are returned too; otherwise the password comes from
// the usual sources (docs/cli.md 4). FIDO2 failures exit 31.
func initPassword(e *env, a *argContainer) ([]byte, *configfile.FIDO2Params, error) {
	if a.fido2 == "" {
		pw, err := e.passwordSource(a).Twice()
		return pw, nil, err
	}
	opts := fido2.Options{Stderr: e.stderr, Logger: e.log}
	cred, err := fido2.Register(a.fido2, filepath.Base(a.cipherdir), opts)
	if err != nil {
		return nil, nil, exitcodes.New(exitcodes.FIDO2Error, err)
	}
	salt := fido2.NewSalt()
	secret, err := fido2.Secret(a.fido2, cred, salt, a.fido2AssertOptions, opts)
	if err != nil {
		return nil, nil, exitcodes.New(exitcodes.FIDO2Error, err)
	}
	return secret, &configfile.FIDO2Params{
		CredentialID:  cred,
		HMACSalt:      salt,
		AssertOptions: a.fido2AssertOptions,
	}, nil
}
