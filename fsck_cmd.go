package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/tlog"
)

// runFsck implements -fsck (docs/cli.md 6.5): unlock the master key like a
// mount does, then check the ciphertext directly (nothing is mounted and
// nothing is written), printing one line per problem on stderr and a
// summary. Exit 0 when clean, 26 when problems were found, 11 when
// interrupted by SIGINT/SIGTERM.
func runFsck(e *env, a *argContainer) error {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	mk, feat, err := unlock(e, a)
	if err != nil {
		return err
	}
	cc, nt, ce, err := buildCore(e, a, mk, feat)
	cryptocore.Wipe(mk)
	if err != nil {
		return err
	}
	defer cc.Wipe()

	// Installed only now: during a terminal password prompt Ctrl-C must
	// still end the program at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e.log.Info("Checking filesystem...")
	res, err := fsck.Check(ctx, fsck.Options{
		CipherDir:     a.cipherdir,
		NameTransform: nt,
		ContentEnc:    ce,
		Logger:        e.log,
		Report: func(p fsck.Problem) {
			line := p.String()
			if e.color {
				line = "\033[33m" + line + "\033[0m"
			}
			fmt.Fprintln(e.stderr, line)
		},
	})
	switch {
	case ctx.Err() != nil:
		return exitcodes.Errorf(exitcodes.Other, "fsck: aborted by signal after %d problems", res.Corrupt)
	case errors.Is(err, fsck.ErrSetup):
		return exitcodes.Errorf(exitcodes.Other, "%v", err)
	case err != nil:
		return exitcodes.Errorf(exitcodes.Other, "fsck: %v", err)
	}
	if res.Skipped > 0 && os.Geteuid() != 0 {
		e.log.Info(fmt.Sprintf("fsck: %d files could not be read for lack of permission; re-run as root to check them", res.Skipped), tlog.Grey())
	}
	if res.Clean() {
		e.log.Info("fsck summary: no problems found", tlog.Green())
		return nil
	}
	return exitcodes.Errorf(exitcodes.FsckErrors, "fsck summary: %d corrupt files, %d files skipped", res.Corrupt, res.Skipped)
}
