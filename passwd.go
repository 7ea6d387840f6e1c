package main

import (
	"errors"
	"fmt"
	"os"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/tlog"
)

// changePassword implements -passwd (docs/cli.md 6.6, docs/format.md 2.8): unlock the
// master key with the old password (or -masterkey/-zerokey) and re-wrap it
// with a new password read from stdin or the terminal.
func changePassword(e *env, a *argContainer) error {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	confPath := a.configPath()
	if a.config != "" {
		e.log.Info(fmt.Sprintf("Using config file at custom location %s", confPath), tlog.Yellow())
	}
	cf, err := loadConfig(confPath)
	if err != nil {
		return err
	}
	if cf.IsFeatureFlagSet(configfile.FlagFIDO2) {
		return exitcodes.Errorf(exitcodes.Usage, "Password change is not supported on FIDO2-enabled filesystems.")
	}
	logN := 0 // keep the current N unless -scryptn is given
	if a.isSet("scryptn") {
		if a.scryptn < configfile.ScryptMinLogN || a.scryptn > configfile.ScryptMaxLogN {
			return exitcodes.Errorf(exitcodes.ScryptParams, "-scryptn %d is outside the allowed range %d..%d",
				a.scryptn, configfile.ScryptMinLogN, configfile.ScryptMaxLogN)
		}
		logN = a.scryptn
	}
	src := e.passwordSource(a)
	mk, err := explicitMasterKey(e, a)
	if err != nil {
		return err
	}
	if mk == nil {
		old, err := src.Once()
		if err != nil {
			return err
		}
		e.log.Info("Decrypting master key")
		mk, err = cf.DecryptMasterKey(old)
		cryptocore.Wipe(old)
		if err != nil {
			return unlockError(err)
		}
	} else {
		// The old password is being bypassed: keep the old file so the
		// user can go back if the new password gets lost too.
		bak := confPath + configfile.BakSuffix
		if err := os.Link(confPath, bak); err != nil {
			cryptocore.Wipe(mk)
			return exitcodes.Errorf(exitcodes.Init, "Could not create a backup of the config file: %v", err)
		}
		e.log.Info(fmt.Sprintf("A copy of the old config file has been created at %q.", bak))
		e.log.Info("Delete it after you have verified that you can access your files with the new password.")
	}
	defer cryptocore.Wipe(mk)

	e.log.Info("Please enter your new password.")
	pw, err := src.Interactive(true)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(pw)
	if err := cf.EncryptMasterKey(mk, pw, logN); err != nil {
		if errors.Is(err, configfile.ErrScryptParams) {
			return exitcodes.New(exitcodes.ScryptParams, err)
		}
		return exitcodes.Errorf(exitcodes.WriteConf, "Re-wrapping the master key failed: %v", err)
	}
	if err := cf.WriteFile(); err != nil {
		return exitcodes.Errorf(exitcodes.WriteConf, "Writing the config file failed: %v", err)
	}
	e.log.Info("Password changed.", tlog.Green())
	return nil
}
