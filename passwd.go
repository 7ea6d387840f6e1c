package main

import (
	"fmt"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/tlog"
)

// changePassword implements -passwd (docs/cli.md 6.6, docs/format.md 2.8): unlock the
// master key with the old secret and re-wrap the key slot that it opened
// with a new password (or, for a key-file slot, the -newkeyfile); the
// other slots stay as they are. With -masterkey/-zerokey the first slot is
// reset. -scryptn, -argon2id and -label apply to the re-wrapped slot. A
// new secret that another slot already takes is refused.
func changePassword(e *env, a *argContainer) error {
	if a.fido2 != "" {
		return exitcodes.Errorf(exitcodes.Usage, "Password change is not supported on FIDO2-enabled filesystems. "+
			"Add a new slot with -addkey -newfido2 and remove the old one with -removekey instead.")
	}
	spec, err := newSlotSpec(a, configfile.SlotPassword)
	if err != nil {
		return err
	}
	cf, mk, slot, err := openForSlotChange(e, a)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(mk)
	switch {
	case slot < 0: // -masterkey: reset the first slot
		slot = 0
		if a.newkeyfile != "" {
			spec.Kind = configfile.SlotKeyFile
		}
	case cf.Slots()[slot].Kind == configfile.SlotKeyFile:
		if a.newkeyfile == "" {
			return exitcodes.Errorf(exitcodes.Usage, "Key slot %d takes a key file: give the new one with -newkeyfile FILE", slot)
		}
		spec.Kind = configfile.SlotKeyFile
	}
	pw, err := newSecret(e, a, &spec)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(pw)
	if err := refuseDuplicateSecret(e, cf, spec.Kind, pw, slot); err != nil {
		return err
	}
	refusedBefore := cf.IsFeatureFlagSet(configfile.FlagKeySlots)
	if err := cf.ReplaceSlot(slot, mk, pw, spec); err != nil {
		return slotError("Re-wrapping the master key", err)
	}
	if err := writeConfig(cf); err != nil {
		return err
	}
	if !refusedBefore {
		warnReferenceRefuses(e, cf, "The first key slot")
	}
	if len(cf.Slots()) > 1 {
		e.log.Info(fmt.Sprintf("Key slot %d changed; the other slots are unchanged.", slot))
	}
	e.log.Info("Password changed.", tlog.Green())
	return nil
}
