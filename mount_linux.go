package main

// platformRefuses: every mount option works on Linux (docs/cli.md
// "Platforms").
func platformRefuses(a *argContainer) error { return nil }
