package main

import "os"

// platformRefuses refuses the mount options that macOS cannot serve with
// Linux's guarantees (darwinRefuses).
func platformRefuses(a *argContainer) error { return darwinRefuses(a, os.Geteuid()) }
