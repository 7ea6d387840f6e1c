package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/repair"
	"gocryptfs/internal/syscallcompat"
	"gocryptfs/internal/tlog"
)

// runFsck implements -fsck (docs/cli.md 6.5): unlock the master key like a
// mount does, then check the ciphertext directly (nothing is mounted and
// nothing is written), printing one line per problem on stderr and a
// summary (with -json: one JSON object per problem and a summary on
// stdout). Exit 0 when clean, 26 when problems were found, 11 when
// interrupted by SIGINT/SIGTERM. With -repair see runRepair.
func runFsck(e *env, a *argContainer) error {
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	if a.repair {
		// Before the password prompt: a mounted CIPHERDIR is refused
		// anyway, and asking first would waste the user's typing (or a
		// FIDO2 touch). Repair checks again on the descriptor it works on.
		if err := refuseMounted(a.cipherdir); err != nil {
			return err
		}
	}
	mk, feat, err := unlockFS(e, a)
	if err != nil {
		return err
	}
	cc, nt, ce, err := buildCore(e, a, mk, feat)
	var journalKey []byte
	if err == nil && a.repair {
		// Its own key, derived like the others (docs/format.md 3, 14.2).
		journalKey = cryptocore.HKDF(mk, repair.JournalKeyInfo, repair.JournalKeyLen)
		defer cryptocore.Wipe(journalKey)
	}
	cryptocore.Wipe(mk)
	if err != nil {
		return err
	}
	defer cc.Wipe()

	// Installed only now: during a terminal password prompt Ctrl-C must
	// still end the program at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := fsckOutput{e: e, json: a.json}
	if a.repair {
		return runRepair(ctx, e, a, nt, ce, journalKey, out)
	}
	if !a.json {
		e.log.Info("Checking filesystem...")
	}
	rootFd := -1
	if a.json {
		// Describe reads damaged files below it, never by path.
		if rootFd, err = syscallcompat.OpenDirPath(a.cipherdir); err != nil {
			return exitcodes.Errorf(exitcodes.Other, "fsck: open %s: %v", a.cipherdir, err)
		}
		defer syscallcompat.Close(rootFd)
	}
	res, err := fsck.Check(ctx, fsck.Options{
		CipherDir:     a.cipherdir,
		NameTransform: nt,
		ContentEnc:    ce,
		Logger:        e.log,
		Report: func(p fsck.Problem) {
			if a.json {
				out.event(repair.Describe(rootFd, ce, p))
				return
			}
			out.problem(p)
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
	return out.summary(res, 0)
}

// refuseMounted fails with exit code 11 if cipherDir is mounted or held
// open by another process (repair.CheckNotMounted).
func refuseMounted(cipherDir string) error {
	fd, err := syscallcompat.OpenDirPath(cipherDir)
	if err != nil {
		return exitcodes.Errorf(exitcodes.Other, "fsck -repair: open %s: %v", cipherDir, err)
	}
	defer syscallcompat.Close(fd)
	if err := repair.CheckNotMounted(fd, cipherDir); err != nil {
		return exitcodes.Errorf(exitcodes.Other, "fsck -repair: %v", err)
	}
	return nil
}

// runRepair implements -fsck -repair: repair (which refuses a mounted
// CIPHERDIR and a journal it did not write), and exit 0 when the result
// is clean (26 otherwise).
func runRepair(ctx context.Context, e *env, a *argContainer, nt *nametransform.NameTransform, ce *contentenc.ContentEnc, journalKey []byte, out fsckOutput) error {
	opts := repair.Options{
		CipherDir:     a.cipherdir,
		NameTransform: nt,
		ContentEnc:    ce,
		JournalKey:    journalKey,
		Logger:        e.log,
		Report: func(ev repair.Event) {
			if a.json {
				out.event(ev)
			} else {
				out.human(ev)
			}
		},
	}
	if !a.json {
		e.log.Info("Checking and repairing filesystem...")
	}
	res, err := repair.Repair(ctx, opts)
	switch {
	case ctx.Err() != nil:
		return exitcodes.Errorf(exitcodes.Other, "fsck -repair: aborted by signal after %d actions; run it again to finish", res.Actions)
	case err != nil:
		return exitcodes.Errorf(exitcodes.Other, "fsck -repair: %v", err)
	}
	return out.summary(res.Final, res.Actions)
}

// fsckOutput prints findings, actions and the summary, either as the
// human-readable lines or as JSON objects (one per line) on stdout.
type fsckOutput struct {
	e    *env
	json bool
}

func (o fsckOutput) event(ev repair.Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	fmt.Fprintln(o.e.stdout, string(b))
}

func (o fsckOutput) problem(p fsck.Problem) {
	line := p.String()
	if o.e.color {
		line = "\033[33m" + line + "\033[0m"
	}
	fmt.Fprintln(o.e.stderr, line)
}

// human prints a finding as -fsck does and an action as one line.
func (o fsckOutput) human(ev repair.Event) {
	if ev.Type == "finding" {
		line := ev.Line
		if o.e.color {
			line = "\033[33m" + line + "\033[0m"
		}
		fmt.Fprintln(o.e.stderr, line)
		return
	}
	line := fmt.Sprintf("repair: %s %s", ev.Action, shownEntry(ev))
	if ev.SalvagedTo != "" {
		line += fmt.Sprintf(", saved as %q", ev.SalvagedTo)
	}
	if len(ev.Holds) > 0 {
		line += ", a directory holding " + quoteList(ev.Holds)
		if ev.HoldsMore > 0 {
			line += fmt.Sprintf(" and %d more", ev.HoldsMore)
		}
	}
	if len(ev.Ranges) > 0 {
		line += " (" + lostText(ev) + ")"
	}
	if ev.QuarantinedTo != "" {
		line += fmt.Sprintf(", original in %q", ev.QuarantinedTo)
	}
	if ev.Error != "" {
		// Why nothing was copied (a FIFO or device node), or where an
		// IV came from.
		line += " (" + ev.Error + ")"
	}
	o.e.log.Info(line)
}

// shownEntry names the entry of an action for people: its plaintext path
// where known, then where it is stored.
func shownEntry(ev repair.Event) string {
	if ev.NameLost {
		dir := fmt.Sprintf("of %q", ev.Path)
		if ev.Path == "" {
			dir = "of the root directory"
		}
		return fmt.Sprintf("an entry %s whose name cannot be decrypted (stored as %q)", dir, ev.CipherPath)
	}
	if ev.Path == ev.CipherPath {
		return fmt.Sprintf("%q", ev.Path) // -plaintextnames
	}
	return fmt.Sprintf("%q (stored as %q)", ev.Path, ev.CipherPath)
}

// quoteList quotes and joins names.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// lostText says what a salvaged or quarantined file lost. A file of
// which nothing could be saved says so and why, never "0 bytes lost"; a
// cut-off end of unknown length is named by its offset.
func lostText(ev repair.Event) string {
	if ev.SalvagedTo == "" {
		if all := ev.Ranges[0].End; all > 0 {
			return fmt.Sprintf("nothing could be saved, all %d bytes lost: %s", all, ev.Ranges[0].Reason)
		}
		return "nothing could be saved: " + ev.Ranges[0].Reason
	}
	var known uint64
	var parts []string
	for _, r := range ev.Ranges {
		if r.End == r.Start {
			parts = append(parts, fmt.Sprintf("everything after byte %d lost", r.Start))
		}
		known += r.End - r.Start
	}
	if known > 0 {
		parts = append([]string{fmt.Sprintf("%d bytes lost", known)}, parts...)
	}
	return strings.Join(parts, " and ") + ", listed in .lost-ranges.txt"
}

// summary prints the last line and picks the exit code.
func (o fsckOutput) summary(res fsck.Result, actions int) error {
	if o.json {
		clean := res.Clean()
		o.event(repair.Event{Type: "summary", Corrupt: &res.Corrupt, Skipped: &res.Skipped, Repaired: &actions, Clean: &clean})
	} else {
		if res.Skipped > 0 && os.Geteuid() != 0 {
			o.e.log.Info(fmt.Sprintf("fsck: %d files could not be read for lack of permission; re-run as root to check them", res.Skipped), tlog.Grey())
		}
		if res.Warnings > 0 {
			o.e.log.Info(fmt.Sprintf("fsck: %d sync conflict copies (shown by a mount; merge or delete them through it)", res.Warnings))
		}
		if res.Clean() {
			o.e.log.Info("fsck summary: no problems found", tlog.Green())
		}
	}
	if res.Clean() {
		return nil
	}
	if o.json {
		return exitcodes.New(exitcodes.FsckErrors, nil)
	}
	return exitcodes.Errorf(exitcodes.FsckErrors, "fsck summary: %d corrupt files, %d files skipped", res.Corrupt, res.Skipped)
}
