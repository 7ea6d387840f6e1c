package main

// Hooks for features owned by other parts of the project that have not
// landed yet. Each one is a single function so that wiring the real
// implementation in is a one-line change.

import (
	"gocryptfs/internal/exitcodes"
)

// fsckHook implements -fsck (CLI.md 6.5).
// HOOK: not implemented yet.
func fsckHook(e *env, a *argContainer) error {
	return exitcodes.Errorf(exitcodes.Usage, "-fsck is not implemented yet")
}

// reverseMountHook mounts in reverse mode (CLI.md 5, FORMAT.md 9).
// HOOK: reverse mode is owned by the reverse frontend; not implemented yet.
func reverseMountHook(e *env, a *argContainer) error {
	return exitcodes.Errorf(exitcodes.Usage, "reverse mode is not implemented yet")
}

// ctlsockHook creates the control socket (CLI.md 8) before the password is
// read. HOOK: the ctlsock server does not exist yet.
func ctlsockHook(e *env, a *argContainer) error {
	if a.ctlsock == "" {
		return nil
	}
	return exitcodes.Errorf(exitcodes.CtlSock, "-ctlsock is not implemented yet")
}
