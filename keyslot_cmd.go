package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/tlog"
	"gocryptfs/internal/unlock"
)

// newSlotSpec returns the parameters of a slot created or re-wrapped by
// -init, -addkey or -passwd: -label, -argon2id (with its costs) or
// -scryptn.
func newSlotSpec(a *argContainer, kind configfile.SlotKind) (configfile.SlotSpec, error) {
	spec := configfile.SlotSpec{Kind: kind, Label: a.label}
	if a.argon2id {
		p := configfile.DefaultArgon2idParams()
		if a.isSet("argon2id-time") {
			p.Time = a.argon2idTime
		}
		if a.isSet("argon2id-memory") {
			p.Memory = a.argon2idMemory * 1024
		}
		if err := configfile.CheckArgon2idCosts(p); err != nil {
			return spec, exitcodes.New(exitcodes.ScryptParams, err)
		}
		spec.Argon2id = &p
	} else if a.isSet("scryptn") {
		if a.scryptn < configfile.ScryptMinLogN || a.scryptn > configfile.ScryptMaxLogN {
			return spec, exitcodes.Errorf(exitcodes.ScryptParams, "-scryptn %d is outside the allowed range %d..%d",
				a.scryptn, configfile.ScryptMinLogN, configfile.ScryptMaxLogN)
		}
		spec.ScryptLogN = a.scryptn
	}
	return spec, nil
}

// newSecret reads the secret of a slot being added: -newfido2 registers a
// credential on that token, -newkeyfile reads the file, otherwise a new
// password is read like -passwd reads it (stdin when it is not a terminal,
// else the terminal twice).
func newSecret(e *env, a *argContainer, spec *configfile.SlotSpec) ([]byte, error) {
	switch spec.Kind {
	case configfile.SlotFIDO2:
		secret, params, err := unlock.NewFIDO2Secret(a.newfido2, filepath.Base(a.cipherdir), a.fido2AssertOptions, e.fido2Options())
		spec.FIDO2 = params
		return secret, err
	case configfile.SlotKeyFile:
		return unlock.ReadKeyFile(a.newkeyfile)
	}
	e.log.Info("Please enter your new password.")
	return e.passwordSource(a).Interactive(true)
}

// openForSlotChange loads the config and the master key for -addkey,
// -removekey and -passwd: from -masterkey/-zerokey (slot = -1, after
// keeping a .bak copy, since nothing can check that key) or by unlocking
// a slot with the current secret.
func openForSlotChange(e *env, a *argContainer) (*configfile.ConfFile, []byte, int, error) {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return nil, nil, -1, err
	}
	cf, _, err := openConfig(e, a)
	if err != nil {
		return nil, nil, -1, err
	}
	mk, err := explicitMasterKey(e, a)
	if err != nil {
		return nil, nil, -1, err
	}
	if mk == nil {
		mk, slot, err := unlockConfig(e, a, cf)
		return cf, mk, slot, err
	}
	// The secrets are being bypassed: keep the old file so the user can
	// go back if the given key was wrong or the new secret gets lost.
	bak := cf.Path() + configfile.BakSuffix
	if err := os.Link(cf.Path(), bak); err != nil {
		cryptocore.Wipe(mk)
		return nil, nil, -1, exitcodes.Errorf(exitcodes.Init, "Could not create a backup of the config file: %v", err)
	}
	e.log.Info(fmt.Sprintf("A copy of the old config file has been created at %q.", bak))
	e.log.Info("Delete it after you have verified that you can access your files with the new secret.")
	return cf, mk, -1, nil
}

// writeConfig writes cf atomically (exit 24 on failure).
func writeConfig(cf *configfile.ConfFile) error {
	if err := cf.WriteFile(); err != nil {
		return exitcodes.Errorf(exitcodes.WriteConf, "Writing the config file failed: %v", err)
	}
	return nil
}

// slotError maps a slot operation's error to an exit code: 13 for KDF
// costs out of range, else 24.
func slotError(what string, err error) error {
	if errors.Is(err, configfile.ErrScryptParams) || errors.Is(err, configfile.ErrArgon2idParams) {
		return exitcodes.New(exitcodes.ScryptParams, err)
	}
	return exitcodes.Errorf(exitcodes.WriteConf, "%s failed: %v", what, err)
}

// addKey implements -addkey: unlock with the current secret, then add a
// password, FIDO2 (-newfido2) or key-file (-newkeyfile) slot.
func addKey(e *env, a *argContainer) error {
	kind := configfile.SlotPassword
	switch {
	case a.newfido2 != "":
		kind = configfile.SlotFIDO2
	case a.newkeyfile != "":
		kind = configfile.SlotKeyFile
	}
	spec, err := newSlotSpec(a, kind)
	if err != nil {
		return err
	}
	cf, mk, _, err := openForSlotChange(e, a)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(mk)
	secret, err := newSecret(e, a, &spec)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(secret)
	if err := refuseDuplicateSecret(e, cf, kind, secret, -1); err != nil {
		return err
	}
	i, err := cf.AddSlot(mk, secret, spec)
	if err != nil {
		return slotError("Adding the key slot", err)
	}
	if err := writeConfig(cf); err != nil {
		return err
	}
	e.log.Info(fmt.Sprintf("Key slot %d (%s) added.", i, kind), tlog.Green())
	return nil
}

// refuseDuplicateSecret fails (exit 1) when secret, a new password or key
// file, already opens one of cf's slots of that kind other than slot
// except (-1 for none), see unlock.SlotTaken: -removekey could only ever
// remove the first of two slots with one secret, and the old password
// would keep opening the filesystem after -passwd changed one of them.
func refuseDuplicateSecret(e *env, cf *configfile.ConfFile, kind configfile.SlotKind, secret []byte, except int) error {
	i := unlock.SlotTaken(cf, kind, secret, except, e.log)
	if i < 0 {
		return nil
	}
	what := "password"
	if kind == configfile.SlotKeyFile {
		what = "key file"
	}
	return exitcodes.Errorf(exitcodes.Usage, "Key slot %d already opens with this %s; refusing to give it to another slot. Choose a different one.", i, what)
}

// removeKey implements -removekey: remove the slot that the given secret
// opens, unless it is the last one. The master key stays the same.
func removeKey(e *env, a *argContainer) error {
	if a.masterkey != "" || a.zerokey {
		return exitcodes.Errorf(exitcodes.Usage, "-removekey removes the slot that the given secret opens; -masterkey/-zerokey open none")
	}
	cf, mk, slot, err := openForSlotChange(e, a)
	if err != nil {
		return err
	}
	cryptocore.Wipe(mk)
	name := slotName(slot, cf.Slots()[slot].Label)
	if err := cf.RemoveSlot(slot); err != nil {
		if errors.Is(err, configfile.ErrLastSlot) {
			return exitcodes.Errorf(exitcodes.Usage, "%s is the only key slot; refusing to remove it.", name)
		}
		return slotError("Removing the key slot", err)
	}
	if err := writeConfig(cf); err != nil {
		return err
	}
	e.log.Info(name+" removed.", tlog.Green())
	if slot == 0 {
		warnReferenceRefuses(e, cf, "The new first key slot")
	}
	return nil
}

// slotName names key slot i for messages: "Key slot 1", with its label
// when it has one ("Key slot 1 (label \"laptop\")"), so that the user
// sees which of several slots a secret matched.
func slotName(i int, label string) string {
	if label == "" {
		return fmt.Sprintf("Key slot %d", i)
	}
	return fmt.Sprintf("Key slot %d (label %q)", i, label)
}

// warnReferenceRefuses warns when cf's first key slot is not in the
// reference's format (feature flag KeySlots: Argon2id, a key file, or a
// slot-format slot that became first), so that gocryptfs 2.x refuses the
// filesystem ("Unknown feature flag", exit 27). It is said when an action
// makes it so (-init, -passwd, -removekey), not first when an older version
// is tried; what names the slot, e.g. "The first key slot".
func warnReferenceRefuses(e *env, cf *configfile.ConfFile, what string) {
	if !cf.IsFeatureFlagSet(configfile.FlagKeySlots) {
		return
	}
	e.log.Warn(what + " is not in the format gocryptfs 2.x reads, so older versions refuse this filesystem. " +
		"Change its secret with -passwd (scrypt) to make it readable for them.")
}

// validateKeySlotArgs checks the combinations of the key-slot options: one
// current secret, new-secret options only where a slot is created.
func (a *argContainer) validateKeySlotArgs() error {
	if a.keyfile != "" && (len(a.extpass) > 0 || len(a.passfile) > 0 || a.fido2 != "" || a.masterkey != "" || a.zerokey) {
		return errors.New("-keyfile cannot be combined with -extpass, -passfile, -fido2, -masterkey or -zerokey")
	}
	if a.keyfile != "" && a.init {
		return errors.New("-keyfile unlocks an existing filesystem; create one with a password, then -addkey -newkeyfile")
	}
	if a.newfido2 != "" && a.newkeyfile != "" {
		return errors.New("-newfido2 and -newkeyfile cannot be used at the same time")
	}
	if a.newfido2 != "" && !a.addkey {
		return errors.New("-newfido2 only works with -addkey")
	}
	if a.newkeyfile != "" && !a.addkey && !a.passwd {
		return errors.New("-newkeyfile only works with -addkey and -passwd")
	}
	if (a.argon2id || a.label != "") && !a.init && !a.addkey && !a.passwd {
		return errors.New("-argon2id and -label only work with -init, -addkey and -passwd")
	}
	if a.argon2id && a.isSet("scryptn") {
		return errors.New("-argon2id and -scryptn cannot be used at the same time")
	}
	return nil
}
