package main

import (
	"fmt"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/exitcodes"
)

// info implements -info (docs/cli.md 6.2): print the config summary without
// asking for a password. Failures are reported on stdout, exit 8.
func info(e *env, a *argContainer) error {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	cf, err := configfile.Load(a.configPath())
	if err != nil {
		fmt.Fprintf(e.stdout, "Loading config file failed: %v\n", err)
		return exitcodes.New(exitcodes.LoadConf, nil)
	}
	fmt.Fprint(e.stdout, cf.Info())
	return nil
}
