package main

import (
	"fmt"
	"os"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/tlog"
	"gocryptfs/internal/unlock"
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

// announcedConfigPath returns the config file's path, saying so when
// -config puts it somewhere else than CIPHERDIR.
func announcedConfigPath(e *env, a *argContainer) string {
	confPath := a.configPath()
	if a.config != "" {
		e.log.Info(fmt.Sprintf("Using config file at custom location %s", confPath), tlog.Yellow())
	}
	return confPath
}

// openConfig loads and validates the config for mounting, -fsck and the
// key-slot actions (exit 11 for unreadable or malformed files, 27 for
// refused ones, see withExitCode). It also returns the bytes it parsed
// and the stat of the file read: a reverse mount shows exactly those as
// the view's gocryptfs.conf.
func openConfig(e *env, a *argContainer) (*configfile.ConfFile, *configfile.Raw, error) {
	return unlock.LoadConfig(announcedConfigPath(e, a))
}

// secret is what the command line gives to open a key slot: -fido2,
// -keyfile, or else a password (docs/cli.md 4).
func (e *env) secret(a *argContainer) unlock.Secret {
	return unlock.Secret{
		Password:    e.passwordSource(a),
		KeyFile:     a.keyfile,
		FIDO2Device: a.fido2,
		FIDO2:       e.fido2Options(),
	}
}

// unlockConfig opens the first slot of cf that the command line's secret
// fits (unlock.Open) and returns the master key (the caller wipes it) and
// the slot index. withExitCode gives the failures their codes: 1 when
// the config has no slot for this kind of secret, 9 for unreadable
// secrets, 12 for a wrong one, 27 when every fitting slot is damaged or
// too weak, 13 when every fitting slot's KDF is over this machine's
// budget, 31 for FIDO2 failures. Each slot skipped as damaged or over the
// budget gets a warning; -d names the slot that matched.
func unlockConfig(e *env, a *argContainer, cf *configfile.ConfFile) ([]byte, int, error) {
	s := e.secret(a)
	mk, slot, err := unlock.Open(cf, s, unlock.Options{
		Logger:     e.log,
		NoSlotHint: "use -passfile/-extpass, -keyfile or -fido2 accordingly.",
		Skipped: func(i int, err error) {
			e.log.Warn(fmt.Sprintf("Key slot %d skipped: %v", i, err), tlog.Yellow())
		},
	})
	if err == nil {
		e.log.Debug(fmt.Sprintf("Key slot %d (%s) matched", slot, s.Kind()))
	}
	return mk, slot, err
}

// explicitMasterKey returns the key given by -masterkey or -zerokey, or nil
// when neither is used (unlock.MasterKey).
func explicitMasterKey(e *env, a *argContainer) ([]byte, error) {
	return unlock.MasterKey(a.masterkey, a.zerokey, e.passwordSource(a), e.log)
}
