package main

import (
	"fmt"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/tlog"
)

// features are the filesystem parameters, from the config or (with
// -masterkey/-zerokey) from the command line.
type features struct {
	cipher             cryptocore.ContentCipher
	hkdf               bool
	plaintextNames     bool
	deterministicNames bool
	raw64              bool
	longNameMax        int
	// conf is the config file as unlock read and parsed it; nil with
	// -masterkey/-zerokey. A reverse mount shows it as gocryptfs.conf.
	conf *configfile.Raw
}

// flagFeatures is the feature set of a -masterkey/-zerokey mount, taken
// from the command line.
func flagFeatures(a *argContainer) (features, error) {
	f := features{
		cipher:             cryptocore.AESGCM,
		hkdf:               a.hkdf,
		plaintextNames:     a.plaintextnames,
		deterministicNames: a.deterministicNames,
		raw64:              a.raw64,
		longNameMax:        int(a.longnamemax),
	}
	switch {
	case a.xchacha && a.aessiv:
		return f, exitcodes.Errorf(exitcodes.Usage, "-xchacha and -aessiv cannot be used together")
	case a.xchacha:
		f.cipher = cryptocore.XChaCha20Poly1305
	case a.aessiv || a.reverse:
		f.cipher = cryptocore.AESSIV
	}
	return f, nil
}

// unlock returns the master key and the feature set. With -masterkey or
// -zerokey the config is never opened (docs/cli.md 3.4).
func unlock(e *env, a *argContainer) ([]byte, features, error) {
	mk, err := explicitMasterKey(e, a)
	if err != nil {
		return nil, features{}, err
	}
	if mk != nil {
		f, err := flagFeatures(a)
		if err != nil {
			cryptocore.Wipe(mk)
			return nil, f, err
		}
		return mk, f, nil
	}
	confPath := a.configPath()
	if a.config != "" {
		e.log.Info(fmt.Sprintf("Using config file at custom location %s", confPath), tlog.Yellow())
	}
	cf, raw, err := loadConfig(confPath)
	if err != nil {
		return nil, features{}, err
	}
	if a.reverse && !cf.IsFeatureFlagSet(configfile.FlagAESSIV) {
		return nil, features{}, exitcodes.Errorf(exitcodes.Usage, "Reverse mode requires AES-SIV, but the config file %s does not have the AESSIV feature flag.", confPath)
	}
	mk, _, err = unlockConfig(e, a, cf)
	if err != nil {
		return nil, features{}, err
	}
	has := cf.IsFeatureFlagSet
	plain := has(configfile.FlagPlaintextNames)
	return mk, features{
		cipher:             cf.ContentCipher(),
		hkdf:               has(configfile.FlagHKDF),
		plaintextNames:     plain,
		deterministicNames: !plain && !has(configfile.FlagDirIV),
		raw64:              has(configfile.FlagRaw64),
		longNameMax:        cf.EffectiveLongNameMax(),
		conf:               raw,
	}, nil
}

// buildCore derives the ciphers from the master key: what both frontends
// and -fsck (which works on the ciphertext directly) need. The caller wipes
// mk and, when done, the returned CryptoCore.
func buildCore(e *env, a *argContainer, mk []byte, f features) (*cryptocore.CryptoCore, *nametransform.NameTransform, *contentenc.ContentEnc, error) {
	backend := a.backend
	if f.cipher == cryptocore.AESSIV && backend == cryptocore.BackendOpenSSL {
		e.log.Debug("AES-SIV has no OpenSSL implementation, using Go")
		backend = cryptocore.BackendGo
	}
	cc, err := cryptocore.New(mk, cryptocore.Options{Cipher: f.cipher, Backend: backend, HKDF: f.hkdf})
	if err != nil {
		return nil, nil, nil, exitcodes.Errorf(exitcodes.Usage, "Cannot set up the ciphers: %v", err)
	}
	e.log.Debug("content encryption", "cipher", cc.Cipher.String(), "backend", cc.Backend.String(), "openssl", a.openssl)
	nt, err := nametransform.New(cc, nametransform.Options{
		PlaintextNames:     f.plaintextNames,
		DeterministicNames: f.deterministicNames,
		Raw64:              f.raw64,
		LongNameMax:        f.longNameMax,
		BadnamePatterns:    a.badname,
		Logger:             e.log,
	})
	if err != nil {
		cc.Wipe()
		return nil, nil, nil, exitcodes.Errorf(exitcodes.Usage, "Cannot set up name encryption: %v", err)
	}
	ce, err := contentenc.New(cc, contentenc.Options{Logger: e.log})
	if err != nil {
		cc.Wipe()
		return nil, nil, nil, exitcodes.Errorf(exitcodes.Other, "Cannot set up content encryption: %v", err)
	}
	return cc, nt, ce, nil
}
