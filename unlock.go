package main

import (
	"gocryptfs/internal/configfile"
	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/nametransform"
)

// features are the filesystem parameters, from the config or (with
// -masterkey/-zerokey) from the command line.
type features struct {
	configfile.Features
	// conf is the config file as unlockFS read and parsed it; nil with
	// -masterkey/-zerokey. A reverse mount shows it as gocryptfs.conf.
	conf *configfile.Raw
}

// flagFeatures is the feature set of a -masterkey/-zerokey mount, taken
// from the command line.
func flagFeatures(a *argContainer) (features, error) {
	f := features{Features: configfile.Features{
		Cipher:             cryptocore.AESGCM,
		HKDF:               a.hkdf,
		PlaintextNames:     a.plaintextnames,
		DeterministicNames: a.deterministicNames,
		Raw64:              a.raw64,
		LongNameMax:        int(a.longnamemax),
	}}
	switch {
	case a.xchacha && a.aessiv:
		return f, exitcodes.Errorf(exitcodes.Usage, "-xchacha and -aessiv cannot be used together")
	case a.xchacha:
		f.Cipher = cryptocore.XChaCha20Poly1305
	case a.aessiv || a.reverse:
		f.Cipher = cryptocore.AESSIV
	}
	return f, nil
}

// unlockFS returns the master key and the feature set. With -masterkey or
// -zerokey the config is never opened (docs/cli.md 3.4).
func unlockFS(e *env, a *argContainer) ([]byte, features, error) {
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
	cf, raw, err := openConfig(e, a)
	if err != nil {
		return nil, features{}, err
	}
	f := features{Features: cf.Features(), conf: raw}
	if a.reverse && f.Cipher != cryptocore.AESSIV {
		return nil, features{}, exitcodes.Errorf(exitcodes.Usage, "Reverse mode requires AES-SIV, but the config file %s does not have the AESSIV feature flag.", cf.Path())
	}
	mk, _, err = unlockConfig(e, a, cf)
	if err != nil {
		return nil, features{}, err
	}
	return mk, f, nil
}

// buildCore derives the ciphers from the master key (fscore.New): what
// both frontends and -fsck (which works on the ciphertext directly) need.
// The caller wipes mk and, when done, the returned CryptoCore.
func buildCore(e *env, a *argContainer, mk []byte, f features) (*cryptocore.CryptoCore, *nametransform.NameTransform, *contentenc.ContentEnc, error) {
	c, err := fscore.New(mk, fscore.Options{
		Cipher:  f.Cipher,
		Backend: a.backend,
		HKDF:    f.HKDF,
		Names: nametransform.Options{
			PlaintextNames:     f.PlaintextNames,
			DeterministicNames: f.DeterministicNames,
			Raw64:              f.Raw64,
			LongNameMax:        f.LongNameMax,
			BadnamePatterns:    a.badname,
			Logger:             e.log,
		},
		Logger: e.log,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	e.log.Debug("content encryption", "cipher", c.CC.Cipher.String(), "backend", c.CC.Backend.String(), "openssl", a.openssl)
	return c.CC, c.NT, c.CE, nil
}
