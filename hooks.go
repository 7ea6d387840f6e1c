package main

// Hooks for features owned by other parts of the project that are not wired
// into the command line yet. Each one is a single function so that wiring
// the real implementation in is a one-line change.

import (
	"gocryptfs/internal/exitcodes"
)

// reverseMountHook mounts in reverse mode (CLI.md 5, FORMAT.md 9).
// HOOK: reverse mounts belong to the reverse frontend and are not wired yet.
func reverseMountHook(e *env, a *argContainer) error {
	return exitcodes.Errorf(exitcodes.Usage, "reverse mode is not implemented yet")
}
