package main

import (
	"fmt"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/exitcodes"
)

// info implements -info (docs/cli.md 6.2): print the config summary without
// asking for a password. Failures are reported on stdout, exit 8. With
// -ctlsock PATH it then asks the mount listening there how it is served
// (CIPHERDIR may then be left out); a socket that does not answer is exit
// 20.
func info(e *env, a *argContainer) error {
	if a.cipherdir != "" {
		if err := checkCipherDir(a.cipherdir); err != nil {
			return err
		}
		cf, err := configfile.Load(a.configPath())
		if err != nil {
			fmt.Fprintf(e.stdout, "Loading config file failed: %v\n", err)
			return exitcodes.New(exitcodes.LoadConf, nil)
		}
		fmt.Fprint(e.stdout, cf.Info())
	}
	if a.ctlsock == "" {
		return nil
	}
	mi, err := queryMountInfo(a.ctlsock)
	if err != nil {
		return err
	}
	printMountInfo(e.stdout, mi)
	return nil
}
