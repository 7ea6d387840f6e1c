// Command gocryptfs is an encrypted overlay filesystem (FUSE). This package
// is the command line: argument parsing (cli_args.go), the actions -init,
// -info, -passwd and mounting, and the mapping of errors to exit codes.
// main is the only function that calls os.Exit.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"golang.org/x/term"

	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/readpassword"
	"gocryptfs/internal/tlog"
	"gocryptfs/internal/unlock"
)

// env bundles the process environment the command line works with, so that
// nothing below main reaches for os.Stdout & co. directly.
type env struct {
	args   []string
	stdin  *os.File
	stdout io.Writer
	stderr io.Writer
	// stdoutTTY reports whether stdout is a terminal (master key display).
	stdoutTTY bool
	// color enables ANSI colours (terminals and no NO_COLOR).
	color bool
	// log is the logger of this run; logSwitch lets the daemonized mount
	// move it to syslog after components have been handed the logger.
	log       *slog.Logger
	logSwitch *tlog.Switch
}

func main() {
	e := &env{
		args:      os.Args,
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		color:     tlog.ColorAllowed(),
	}
	os.Exit(run(e))
}

// run executes the command line and returns the exit code. Errors are
// printed here, once: in red on stderr unless the error is silent (its
// message was already printed where it happened).
func run(e *env) int {
	err := withExitCode(dispatch(e))
	if err != nil && !exitcodes.Silent(err) {
		msg := err.Error()
		if e.color {
			msg = "\033[31m" + msg + "\033[0m"
		}
		fmt.Fprintln(e.stderr, msg)
	}
	return exitcodes.From(err)
}

// withExitCode gives the sentinel errors of the internal packages their
// exit codes; errors that already have one keep it. Exit codes are decided
// here, in main, and nowhere else.
func withExitCode(err error) error {
	var coded *exitcodes.Error
	if err == nil || errors.As(err, &coded) {
		return err
	}
	switch {
	case errors.Is(err, readpassword.ErrMasterKey):
		return exitcodes.New(exitcodes.MasterKey, err)
	case errors.Is(err, readpassword.ErrPassword), errors.Is(err, readpassword.ErrTooLong),
		errors.Is(err, unlock.ErrSecret):
		return exitcodes.New(exitcodes.ReadPassword, err)
	case errors.Is(err, unlock.ErrFIDO2):
		return exitcodes.New(exitcodes.FIDO2Error, err)
	case errors.Is(err, unlock.ErrNoSlot), errors.Is(err, fscore.ErrCiphers), errors.Is(err, fscore.ErrNames):
		return exitcodes.New(exitcodes.Usage, err)
	case errors.Is(err, unlock.ErrWrongSecret):
		return exitcodes.New(exitcodes.PasswordIncorrect, err)
	case errors.Is(err, unlock.ErrKDF):
		return exitcodes.New(exitcodes.ScryptParams, err)
	case errors.Is(err, unlock.ErrConfigRefused):
		return exitcodes.New(exitcodes.DeprecatedFS, err)
	case errors.Is(err, unlock.ErrConfig), errors.Is(err, fscore.ErrContent):
		return exitcodes.New(exitcodes.Other, err)
	}
	return err
}

// dispatch parses the arguments and runs the requested action.
func dispatch(e *env) error {
	if len(e.args) <= 1 {
		printShortHelp(e.stdout)
		return exitcodes.New(exitcodes.Usage, nil)
	}
	a, err := parseArgs(e.args)
	if err != nil {
		return err
	}
	e.logSwitch = tlog.NewSwitch(tlog.New(tlog.Options{
		Stdout: e.stdout, Stderr: e.stderr,
		Quiet: a.quiet || a.json, Debug: a.debug, Color: e.color, WPanic: a.wpanic,
	}).Handler())
	e.log = slog.New(e.logSwitch)
	if a.debug {
		logArgs(e)
	}
	switch {
	case a.version:
		fmt.Fprintln(e.stdout, versionLine())
		return nil
	case a.hh:
		printLongHelp(e.stdout)
		return nil
	case a.help:
		printShortHelp(e.stdout)
		return nil
	case a.speed:
		return runSpeed(e)
	}
	if err := a.validate(e.log); err != nil {
		return err
	}
	stop, err := startProfiling(a, e.log)
	if err != nil {
		return err
	}
	defer stop()
	switch {
	case a.init:
		return initFS(e, a)
	case a.info:
		return info(e, a)
	case a.passwd:
		return changePassword(e, a)
	case a.fsck:
		return runFsck(e, a)
	case a.addkey:
		return addKey(e, a)
	case a.removekey:
		return removeKey(e, a)
	}
	return mountAction(e, a)
}

// passwordSource returns the password reader configured from the flags.
func (e *env) passwordSource(a *argContainer) *readpassword.Source {
	return &readpassword.Source{
		Passfiles: a.passfile,
		Extpass:   a.extpass,
		Stdin:     e.stdin,
		Stderr:    e.stderr,
		Logger:    e.log,
	}
}

// fido2Options are how the FIDO2 tools talk to the user: their output on
// stderr, the "interact with your device" notices in the log.
func (e *env) fido2Options() fido2.Options {
	return fido2.Options{Stderr: e.stderr, Logger: e.log}
}
