package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/tlog"
	"gocryptfs/internal/unlock"
)

// initFS implements -init (docs/cli.md 3.1, 4 and 6.1).
func initFS(e *env, a *argContainer) error {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	confPath := announcedConfigPath(e, a)
	if a.reverse {
		if _, err := os.Lstat(confPath); err == nil {
			return exitcodes.Errorf(exitcodes.Init, "config file %q already exists", confPath)
		}
	} else if err := checkDirEmpty(a.cipherdir); err != nil {
		return exitcodes.Errorf(exitcodes.CipherDir, "Invalid cipherdir: %v", err)
	} else {
		warnBackingFS(e, a.cipherdir, false, false)
	}
	if a.isSet("scryptn") && (a.scryptn < configfile.ScryptMinLogN || a.scryptn > configfile.ScryptMaxLogN) {
		return exitcodes.Errorf(exitcodes.WriteConf, "-scryptn %d is outside the allowed range %d..%d",
			a.scryptn, configfile.ScryptMinLogN, configfile.ScryptMaxLogN)
	}
	mk, err := explicitMasterKey(e, a)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(mk)
	if len(a.extpass) == 0 && a.fido2 == "" {
		e.log.Info("Choose a password for protecting your files.")
	}
	var slot *configfile.SlotSpec
	if a.argon2id || a.label != "" {
		spec, err := newSlotSpec(a, configfile.SlotPassword)
		if err != nil {
			return err
		}
		slot = &spec
	}
	pw, fido2Params, err := initPassword(e, a)
	if err != nil {
		return err
	}
	defer cryptocore.Wipe(pw)

	cf, newKey, err := configfile.Create(configfile.CreateArgs{
		Path:               confPath,
		Password:           pw,
		MasterKey:          mk,
		Creator:            "gocryptfs " + programVersion(),
		LogN:               a.scryptn,
		PlaintextNames:     a.plaintextnames,
		DeterministicNames: a.deterministicNames,
		XChaCha20Poly1305:  a.xchacha,
		AESSIV:             a.aessiv,
		Reverse:            a.reverse,
		LongNameMax:        a.longnamemax,
		FIDO2:              fido2Params,
		Slot:               slot,
	})
	if err != nil {
		return exitcodes.Errorf(exitcodes.WriteConf, "Creating the config file failed: %v", err)
	}
	defer cryptocore.Wipe(newKey)
	if err := cf.WriteFile(); err != nil {
		return exitcodes.Errorf(exitcodes.WriteConf, "Writing the config file failed: %v", err)
	}
	warnReferenceRefuses(e, cf, "The first key slot")
	// Forward filesystems with random per-directory IVs need the root IV.
	if !a.reverse && !a.plaintextnames && !a.deterministicNames {
		if err := writeRootDirIV(a.cipherdir); err != nil {
			return exitcodes.Errorf(exitcodes.Init, "Writing the root %s failed: %v", nametransform.DirIVFilename, err)
		}
	}
	if e.stdoutTTY && !a.quiet {
		printMasterKey(e.stdout, newKey, e.color)
	} else {
		e.log.Info("Not running on a terminal, suppressing master key display")
	}
	mode, flag := "gocryptfs", ""
	if a.reverse {
		mode, flag = "gocryptfs-reverse", "-reverse "
	}
	e.log.Info(fmt.Sprintf("The %s filesystem has been created successfully.", mode), tlog.Green())
	e.log.Info(fmt.Sprintf("You can now mount it using: gocryptfs %s%s MOUNTPOINT", flag, displayPath(a.cipherdir)), tlog.Grey())
	return nil
}

// checkDirEmpty fails unless dir contains no entries.
func checkDirEmpty(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("directory %s is not empty", dir)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// writeRootDirIV creates CIPHERDIR/gocryptfs.diriv through a directory fd.
func writeRootDirIV(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	_, err = nametransform.WriteDirIVAt(fd)
	return err
}

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
	return unlock.NewFIDO2Secret(a.fido2, filepath.Base(a.cipherdir), a.fido2AssertOptions, e.fido2Options())
}

// displayPath shows dir relative to the working directory unless that would
// climb up with "../", quoted when it contains a space (docs/cli.md 6.1).
func displayPath(dir string) string {
	p := dir
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p = rel
		}
	}
	if strings.Contains(p, " ") {
		p = `"` + p + `"`
	}
	return p
}

// formatMasterKey renders a 32-byte key as two lines of four 8-digit groups,
// indented by four spaces, the first line ending in "-".
func formatMasterKey(key []byte) string {
	h := fmt.Sprintf("%x", key)
	var groups []string
	for i := 0; i < len(h); i += 8 {
		groups = append(groups, h[i:min(i+8, len(h))])
	}
	var b strings.Builder
	for i := 0; i < len(groups); i += 4 {
		end := min(i+4, len(groups))
		b.WriteString("    " + strings.Join(groups[i:end], "-"))
		if end < len(groups) {
			b.WriteString("-")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// printMasterKey prints the master key block of docs/cli.md 6.1.
func printMasterKey(w io.Writer, key []byte, color bool) {
	lines := formatMasterKey(key)
	if color {
		lines = "\033[2m" + lines + "\033[0m"
	}
	fmt.Fprintf(w, "\nYour master key is:\n\n%s\n", lines)
	fmt.Fprint(w, "If the gocryptfs.conf file becomes corrupted or you ever forget your password,\n"+
		"there is only one hope for recovery: The master key. Print it to a piece of\n"+
		"paper and store it in a drawer. This message is only printed once.\n\n")
}
