// Package daemon runs a mount in the background the way gocryptfs does
// (docs/cli.md 5.2):
//
//   - Fork, in the process the user started, re-executes the binary in
//     the foreground with "-fg -notifypid=PID" in front of its arguments
//     and waits until the child says the mount is ready (SIGUSR1) or
//     exits; the shell then gets its prompt back, or the child's exit
//     code;
//   - Detach, in that child once it has mounted, leaves the terminal
//     (working directory /, new session, stdin from /dev/null), sends
//     the log to syslog (and whatever libraries print, through logger(1))
//     or, without syslog, to the terminal or nowhere, and tells the
//     parent;
//   - WatchIdle unmounts a mount that nobody used for a while (-idle).
//
// Each function is called once per process, from its main goroutine
// (WatchIdle in a goroutine of its own); none keeps state between calls.
// Exit codes are the caller's: errors wrap ErrFork.
package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"gocryptfs/internal/syscallcompat"
	"gocryptfs/internal/tlog"
)

// ErrFork is wrapped by the errors of Fork: the child could not be
// started, or it died without an exit code.
var ErrFork = errors.New("forkChild")

// Stdio are the standard streams a child inherits.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Fork re-executes this binary (named argv0 in its process list) with
// "-fg -notifypid=<our pid>" in front of args and waits until the child
// either sends SIGUSR1 (it mounted: Fork returns 0, nil) or exits: with a
// code above 0, that code is returned; a child that exited 0 without
// notifying (it unmounted at once) is 0 too.
func Fork(argv0 string, args []string, stdio Stdio) (code int, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("%w: cannot find own executable: %v", ErrFork, err)
	}
	c := exec.Command(exe, append([]string{"-fg", fmt.Sprintf("-notifypid=%d", os.Getpid())}, args...)...)
	c.Args[0] = argv0
	c.Stdin, c.Stdout, c.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	ready := make(chan os.Signal, 1)
	signal.Notify(ready, syscall.SIGUSR1)
	defer signal.Stop(ready)
	if err := c.Start(); err != nil {
		return 0, fmt.Errorf("%w: starting %s failed: %v", ErrFork, exe, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	select {
	case <-ready:
		return 0, nil
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if code := ee.ExitCode(); code > 0 {
				return code, nil
			}
			return 0, fmt.Errorf("%w: child died: %v", ErrFork, err)
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrFork, err)
		}
		return 0, nil
	}
}

// Options says how Detach routes the output of the background mount.
type Options struct {
	// NoSyslog keeps the log where it is (-nosyslog).
	NoSyslog bool
	// Quiet, Debug and WPanic are the log levels of -q, -d and -wpanic,
	// for the syslog or terminal handler Detach installs.
	Quiet, Debug, WPanic bool
	// NotifyPID is the waiting parent (-notifypid), sent SIGUSR1.
	NotifyPID int
	// Stderr is the process's standard error, for the one line that says
	// syslog is missing.
	Stderr io.Writer
	// SetHandler switches where the records of Log go from now on.
	SetHandler func(slog.Handler)
	// Log is the process's logger.
	Log *slog.Logger
}

// Detach finishes daemonizing the mounted child and tells the waiting
// parent that the mount is ready. Failures are logged: the mount is up
// and goes on.
func Detach(o Options) {
	if err := os.Chdir("/"); err != nil {
		o.Log.Warn("could not change the working directory to /", "err", err)
	}
	if _, err := unix.Setsid(); err != nil {
		o.Log.Debug("setsid failed", "err", err)
	}
	if !o.NoSyslog {
		if h, err := tlog.NewSyslogHandler("gocryptfs", o.Quiet, o.Debug); err != nil {
			// logger(1) could not deliver either.
			noSyslog(o, err)
		} else {
			o.SetHandler(h)
			redirectStdoutToLogger(o.Log)
		}
	}
	if err := redirectFd("/dev/null", unix.O_RDONLY, 0); err != nil {
		o.Log.Warn("could not redirect stdin to /dev/null", "err", err)
	}
	if err := unix.Kill(o.NotifyPID, unix.SIGUSR1); err != nil {
		o.Log.Warn("could not notify the parent process", "pid", o.NotifyPID, "err", err)
	}
}

// noSyslog sets up the output of a background mount on a machine without
// syslog. A terminal on stderr keeps getting the messages
// (NoSyslogHandler). Anything else (a pipe, such as mount(8)'s or a
// "$(...)") must be let go, or whoever reads it would wait for the end of
// the daemon; the messages are then discarded, which is said once, on
// stderr, when it matters: with -d, whose output would be lost.
func noSyslog(o Options, err error) {
	if term.IsTerminal(2) {
		o.SetHandler(NoSyslogHandler(o, err))
		return
	}
	if o.Debug {
		fmt.Fprintf(o.Stderr, "gocryptfs: cannot log to syslog (%v), the messages of the background mount are discarded; use -fg to see them\n", err)
	}
	o.SetHandler(slog.DiscardHandler)
	redirectFd("/dev/null", unix.O_WRONLY, 1)
	redirectFd("/dev/null", unix.O_WRONLY, 2)
}

// NoSyslogHandler is the log of a background mount without syslog whose
// stderr is a terminal: every message goes to o.Stderr (the terminal is
// shared with the shell by now), and the first one is preceded by one
// line that says why (err). A mount that has nothing to say prints
// nothing.
func NoSyslogHandler(o Options, err error) slog.Handler {
	h := tlog.New(tlog.Options{Stdout: o.Stderr, Stderr: o.Stderr, Quiet: o.Quiet, Debug: o.Debug, WPanic: o.WPanic}).Handler()
	return tlog.NoticeFirst(h, func() {
		fmt.Fprintf(o.Stderr, "gocryptfs: cannot log to syslog (%v), messages of the background mount follow on stderr\n", err)
	})
}

// redirectFd points descriptor fd at the file path.
func redirectFd(path string, flags int, fd int) error {
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return syscallcompat.Dup2(int(f.Fd()), fd)
}

// redirectStdoutToLogger connects stdout and stderr to a
// `logger -t gocryptfs-<pid>-logger` process, so that output of libraries
// that print directly still reaches syslog. If logger cannot be started,
// stdout and stderr go to /dev/null.
func redirectStdoutToLogger(log *slog.Logger) {
	pr, pw, err := os.Pipe()
	if err == nil {
		cmd := exec.Command("logger", "-t", fmt.Sprintf("gocryptfs-%d-logger", os.Getpid()))
		cmd.Stdin = pr // its own stdout/stderr stay /dev/null
		err = cmd.Start()
		pr.Close()
		if err == nil {
			go cmd.Wait() // reap it when the pipe closes at exit
			err = errors.Join(syscallcompat.Dup2(int(pw.Fd()), 1), syscallcompat.Dup2(int(pw.Fd()), 2))
			pw.Close()
			if err == nil {
				return
			}
		} else {
			pw.Close()
		}
	}
	log.Debug("could not redirect output to logger, using /dev/null", "err", err)
	redirectFd("/dev/null", unix.O_WRONLY, 1)
	redirectFd("/dev/null", unix.O_WRONLY, 2)
}

// Activity is what WatchIdle needs of a mount (fuseserve.Server).
type Activity interface {
	// OpCount counts the requests served so far.
	OpCount() uint64
	// OpenFileCount is the number of open file and directory handles.
	OpenFileCount() int64
	// Unmount unmounts; it fails while the mount is busy.
	Unmount() error
}

// WatchIdle unmounts srv once no FUSE request arrived and no file was
// open for the whole idle duration, and returns. A busy mount (for
// example a process with its working directory inside) refuses the
// unmount; it then starts counting again. It polls every tenth of idle
// (at least every 100 ms).
func WatchIdle(log *slog.Logger, srv Activity, idle time.Duration) {
	interval := max(idle/10, 100*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	lastOps := srv.OpCount()
	idleSince := time.Now()
	for range t.C {
		ops := srv.OpCount()
		if ops != lastOps || srv.OpenFileCount() > 0 {
			lastOps, idleSince = ops, time.Now()
			continue
		}
		if time.Since(idleSince) < idle {
			continue
		}
		log.Info("Filesystem idle, unmounting", "idle", idle)
		if err := srv.Unmount(); err != nil {
			log.Debug("idle unmount failed, will retry", "err", err)
			lastOps, idleSince = srv.OpCount(), time.Now()
			continue
		}
		return
	}
}
