package main

import "gocryptfs/internal/speed"

// runSpeed implements -speed (docs/cli.md 6.3): it measures every AEAD backend
// for about a second each and marks the ones auto mode selects.
func runSpeed(e *env) error {
	return speed.Run(e.stdout, speed.Options{Header: versionLine(), Logger: e.log})
}
