//go:build linux || darwin

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/daemon"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fusefrontend"
	"gocryptfs/internal/fusefrontend_reverse"
	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/memrelease"
	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
	"gocryptfs/internal/tlog"
)

// minNofile is the open-file limit raised to if it is lower.
const minNofile = 4096

// mountAction implements the mount operation: checks, daemonizing, then
// the actual mount in the (foreground or child) process.
func mountAction(e *env, a *argContainer) error {
	if err := platformRefuses(a); err != nil {
		return err
	}
	if err := checkCipherDir(a.cipherdir); err != nil {
		return err
	}
	if !a.reverse && (len(a.exclude) > 0 || len(a.excludeWildcard) > 0 || len(a.excludeFrom) > 0) {
		return exitcodes.Errorf(exitcodes.ExcludeError, "-exclude only works in reverse mode")
	}
	if err := checkMountpoint(a); err != nil {
		return err
	}
	if !a.fg {
		return forkChild(e)
	}
	return doMount(e, a)
}

// checkMountpoint applies the MOUNTPOINT rules of docs/cli.md 5.1 (exit 10).
func checkMountpoint(a *argContainer) error {
	mp := a.mountpoint
	if strings.HasPrefix(mp, "/dev/fd/") {
		return nil // a pre-opened FUSE fd, handed to go-fuse unchecked
	}
	fail := func(format string, args ...any) error {
		return exitcodes.Errorf(exitcodes.MountPoint, format, args...)
	}
	fi, err := os.Stat(mp)
	if errors.Is(err, syscall.ENOTCONN) {
		return fail("Invalid mountpoint: %s is a FUSE mount whose server is gone. Unmount it first: fusermount -u %s", mp, mp)
	}
	if err != nil {
		return fail("Invalid mountpoint: %v", err)
	}
	if !fi.IsDir() {
		return fail("Invalid mountpoint: %s is not a directory", mp)
	}
	cd, mpr := resolvePath(a.cipherdir), resolvePath(mp)
	if mpr == cd || isInside(cd, mpr) {
		return fail("Mountpoint %q would shadow cipherdir %q, this is not supported", mp, a.cipherdir)
	}
	// A reverse view leaves its own mount point out (no recursion), so it
	// may be mounted inside the directory it shows, e.g. "-reverse / /mnt/x".
	if isInside(mpr, cd) && !a.reverse {
		return fail("Mountpoint %q is contained in cipherdir %q, this is not supported", mp, a.cipherdir)
	}
	// Mounting over a mount would hide it; -nonempty is no way around
	// that (it is about files, not mounts).
	if m, ok := mountinfo.IsMountPoint(mpr); ok {
		return fail("Invalid mountpoint: %s is already a mount point (%s). Unmount it first, or choose another directory.", mp, m.FSType)
	}
	if !a.nonempty {
		if err := checkDirEmpty(mp); err != nil {
			return fail("Invalid mountpoint: %v. Use -nonempty to mount over it anyway.", err)
		}
	}
	return nil
}

// resolvePath returns p with symlinks resolved, or p cleaned if that fails.
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// isInside reports whether path p lies strictly below directory dir.
func isInside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// frontend is what the mount code needs from either FUSE frontend, which
// follow the same conventions: the root directory node, its identity for
// fs.Options.RootStableAttr (the backing root's inode number), path translation for
// the control socket, and Close to release its descriptors after
// unmounting. Activity for -idle is counted by package fuseserve for both.
type frontend interface {
	fs.InodeEmbedder
	ctlsock.Translator
	RootStableAttr() *fs.StableAttr
	Close() error
}

// buildFrontend turns the master key into the FUSE root node of the forward
// or (with -reverse) the reverse frontend. It wipes mk.
func buildFrontend(e *env, a *argContainer, mk []byte, f features, readOnly bool) (frontend, *cryptocore.CryptoCore, error) {
	defer cryptocore.Wipe(mk)
	cc, nt, ce, err := buildCore(e, a, mk, f)
	if err != nil {
		return nil, nil, err
	}
	var rn frontend
	if a.reverse {
		rn, err = newReverseFrontend(e, a, f, nt, ce)
	} else {
		rn, err = newForwardFrontend(e, a, f, readOnly, nt, ce)
	}
	if err != nil {
		cc.Wipe()
		return nil, nil, err
	}
	return rn, cc, nil
}

// newForwardFrontend builds the normal (plaintext view) frontend.
func newForwardFrontend(e *env, a *argContainer, f features, readOnly bool, nt *nametransform.NameTransform, ce *contentenc.ContentEnc) (frontend, error) {
	warnBackingFS(e, a.cipherdir, true, a.sharedstorage)
	rn, err := fusefrontend.NewRootNode(fusefrontend.Args{
		CipherDir:          a.cipherdir,
		PlaintextNames:     f.PlaintextNames,
		DeterministicNames: f.DeterministicNames,
		ForceOwner:         a.forceOwner,
		AllowOther:         a.allowOther,
		SharedStorage:      a.sharedstorage,
		NoPrealloc:         a.noprealloc,
		Suid:               a.suid,
		NoXattr:            a.noxattr,
		KernelCache:        a.kernelCache,
		ReadOnly:           readOnly,
		Writeback:          mountopts.Writeback(mountParams(a, readOnly)),
		ForwardLocks:       mountopts.ForwardLocks(mountParams(a, readOnly)),
		Atime:              atimePolicy(a),
		NoDiratime:         fusefrontend.NoDiratimeFromOptions(strings.Split(a.ko, ",")),
		ACL:                a.acl,
		Logger:             e.log,
	}, nt, ce)
	if err != nil {
		return nil, exitcodes.Errorf(exitcodes.Other, "Cannot set up the filesystem: %v", err)
	}
	return rn, nil
}

// newReverseFrontend builds the read-only encrypted view of a plaintext
// directory (docs/format.md 9). Exclusion problems exit with 29.
func newReverseFrontend(e *env, a *argContainer, f features, nt *nametransform.NameTransform, ce *contentenc.ContentEnc) (frontend, error) {
	var mp fusefrontend_reverse.MountPointID
	if !strings.HasPrefix(a.mountpoint, "/dev/fd/") {
		var err error
		if mp, err = fusefrontend_reverse.MountPointOf(a.mountpoint); err != nil {
			return nil, exitcodes.Errorf(exitcodes.MountPoint, "Invalid mountpoint: %v", err)
		}
	}
	rn, err := fusefrontend_reverse.NewRootNode(fusefrontend_reverse.Args{
		PlainDir:           a.cipherdir,
		CustomConfig:       a.config != "",
		Config:             f.conf,
		PlaintextNames:     f.PlaintextNames,
		DeterministicNames: f.DeterministicNames,
		Excludes:           a.exclude,
		ExcludeWildcards:   a.excludeWildcard,
		ExcludeFrom:        a.excludeFrom,
		OneFileSystem:      a.oneFileSystem,
		MountPoint:         mp,
		ForceOwner:         a.forceOwner,
		NoXattr:            a.noxattr,
		Logger:             e.log,
	}, nt, ce)
	if errors.Is(err, fusefrontend_reverse.ErrExclude) {
		return nil, exitcodes.New(exitcodes.ExcludeError, err)
	}
	if err != nil {
		return nil, exitcodes.Errorf(exitcodes.Other, "Cannot set up the reverse filesystem: %v", err)
	}
	return rn, nil
}

// atimePolicy is the access time policy selected with -ko.
func atimePolicy(a *argContainer) fusefrontend.Atime {
	return fusefrontend.AtimeFromOptions(strings.Split(a.ko, ","))
}

// mountParams collects the flags that shape the go-fuse options; package
// mountopts turns them into options (the FUSE tests use it too).
func mountParams(a *argContainer, readOnly bool) mountopts.Params {
	return mountopts.Params{
		CipherDir:      a.cipherdir,
		FsName:         a.fsname,
		Reverse:        a.reverse,
		ReadOnly:       readOnly,
		RW:             a.rw,
		Suid:           a.suid,
		Dev:            a.dev,
		Exec:           a.exec,
		NoExec:         a.noexec,
		AllowOther:     a.allowOther,
		Context:        a.context,
		KernelOptions:  a.ko,
		SharedStorage:  a.sharedstorage,
		SerializeReads: a.serializeReads,
		ACL:            a.acl,
		Debug:          a.fusedebug,
		NoWriteCache:   a.noWriteCache,
	}
}

// backingReadOnly reports whether CIPHERDIR lives on a read-only mount.
func backingReadOnly(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Flags&syscallcompat.MountRdonly != 0
}

// raiseNofile raises the soft open-file limit to minNofile if it is lower,
// within the hard limit: every open plaintext file costs a descriptor.
func raiseNofile(log *slog.Logger) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur >= minNofile {
		return
	}
	lim.Cur = min(uint64(minNofile), lim.Max)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		log.Debug("raising RLIMIT_NOFILE failed", "err", err)
	}
}

// doMount mounts in this process and serves until unmounted.
func doMount(e *env, a *argContainer) error {
	raiseNofile(e.log)
	if err := checkMountpoint(a); err != nil {
		return err
	}
	ctl, err := startCtlsock(e, a)
	if err != nil {
		return err
	}
	defer ctl.Close()
	readOnly, err := effectiveReadOnly(e, a)
	if err != nil {
		return err
	}
	mk, feat, err := unlockFS(e, a)
	if err != nil {
		return err
	}
	rn, cc, err := buildFrontend(e, a, mk, feat, readOnly)
	if err != nil {
		return err
	}
	// The keys are wiped only once no request can use them any more;
	// serve says when that is not the case.
	keysInUse := false
	defer func() {
		if !keysInUse {
			cc.Wipe()
		}
	}()
	defer rn.Close()
	// scrypt needed a 64 MiB buffer (default cost) that is garbage now; the
	// Go runtime would keep it mapped for minutes. Give it back before
	// serving, so that an idle mount is small.
	debug.FreeOSMemory()
	ctl.Serve(rn)
	defer ctl.Close() // stop answering before rn is closed
	gotSignal, abandoned, err := mountAndServe(e, a, rn, ctl, feat, readOnly)
	keysInUse = abandoned
	if err != nil {
		return err
	}
	if gotSignal {
		return exitcodes.New(exitcodes.SigInt, nil)
	}
	return nil
}

// mountAndServe mounts rn and serves it until it is unmounted; see serve
// for the results. The control socket ctl (nil without -ctlsock) answers
// Info requests from then on.
func mountAndServe(e *env, a *argContainer, rn frontend, ctl *ctlsock.Server, feat features, readOnly bool) (gotSignal, abandoned bool, err error) {
	// Catch SIGINT/SIGTERM before the mount appears, so that a signal sent
	// as soon as the mount is visible still leads to a clean unmount.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	srv, err := mountRoot(e, a, rn, feat, readOnly)
	if err != nil {
		return false, false, err
	}
	ctl.SetInfo(func() ctlsock.MountInfo { return mountInfo(srv.Stats()) })
	// File modes come from the FUSE requests, which already had the
	// caller's umask applied.
	unix.Umask(0)
	transport, why := srv.Transport()
	e.log.Info(fmt.Sprintf("FUSE transport: %s (%s)", transport, why))
	e.log.Info("Filesystem mounted and ready.", tlog.Green())
	if a.allowOther {
		e.log.Info("Note: -allow_other is set. Make sure the file permissions protect your data from unwanted access.", tlog.Yellow())
	}
	if a.notifypid > 0 {
		daemon.Detach(daemonOptions(e, a))
	}
	if a.idle > 0 {
		go daemon.WatchIdle(e.log, srv, a.idle)
	}
	// Give the garbage of a burst of requests (e.g. a recursive stat)
	// back to the OS once it is over, and collect a large heap of inodes
	// more often (unless the user set GOGC).
	stopRelease := make(chan struct{})
	defer close(stopRelease)
	go memrelease.Watch(memrelease.Options{Count: srv.OpCount, TuneGC: os.Getenv("GOGC") == ""}, stopRelease)
	gotSignal, abandoned = serve(e.log, a.mountpoint, srv, sigs)
	return gotSignal, abandoned, nil
}

// mountRoot mounts rn on the mount point with the FUSE transport of -uring.
// -uring=true where io_uring cannot be used fails here, with the reason.
func mountRoot(e *env, a *argContainer, rn frontend, feat features, readOnly bool) (*fuseserve.Server, error) {
	opts := mountopts.Build(mountParams(a, readOnly))
	opts.RootStableAttr = rn.RootStableAttr()
	var trace *slog.Logger
	if a.debug {
		logSettings(e, a, feat, opts)
		trace = e.log
	}
	srv, err := fuseserve.Mount(a.mountpoint, rn, opts, fuseserve.Options{
		Trace: trace, Log: e.log, ReadAheadKB: mountopts.ReadAheadKB, Transport: a.transport,
		AutoClassic: mountopts.AutoClassic(mountParams(a, readOnly)),
		Attrs:       mountopts.Attrs(mountParams(a, readOnly)),
		// Requests that wait for other mounts' locks end early
		// only for a dying caller (docs/internals.md section 8).
		FatalInterruptsOnly: a.sharedstorage,
	})
	if err != nil {
		return nil, exitcodes.Errorf(exitcodes.FuseNewServer, "fs.Mount failed: %v", err)
	}
	return srv, nil
}

// effectiveReadOnly is -ro, -reverse, or a CIPHERDIR on a read-only
// filesystem (which -rw refuses).
func effectiveReadOnly(e *env, a *argContainer) (bool, error) {
	if a.ro || a.reverse {
		return true, nil
	}
	if !backingReadOnly(a.cipherdir) {
		return false, nil
	}
	if a.rw {
		return false, exitcodes.Errorf(exitcodes.Usage, "Cipherdir %s is on a read-only filesystem, cannot mount read-write (-rw).", a.cipherdir)
	}
	e.log.Info(fmt.Sprintf("Cipherdir %s is on a read-only filesystem, mounting as read-only.", a.cipherdir), tlog.Yellow())
	return true, nil
}

// serve waits until the filesystem is unmounted and no request is running
// any more. SIGINT or SIGTERM unmount it; if it is busy, it is detached
// (lazy unmount) and the files still open on it keep being served until
// they are closed, so that no request runs with wiped keys and no write in
// progress is lost. A second signal gives up at once: abandoned then
// reports that requests may still be running, and the keys must not be
// wiped under them (the process is about to exit anyway).
func serve(log *slog.Logger, mountpoint string, srv *fuseserve.Server, sigs <-chan os.Signal) (gotSignal, abandoned bool) {
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return gotSignal, false
		case s := <-sigs:
			if gotSignal {
				log.Warn(fmt.Sprintf("Received %v again, exiting while the detached filesystem is still in use", s))
				return true, true
			}
			gotSignal = true
			log.Info(fmt.Sprintf("Received %v, unmounting", s))
			if err := srv.Unmount(); err != nil {
				log.Warn(fmt.Sprintf("Unmount failed: %v. Trying lazy unmount.", err))
				lazyUnmount(log, mountpoint)
				log.Info("Filesystem detached; serving the files still open on it until they are closed (send the signal again to exit now).")
			}
		}
	}
}

// lazyUnmount detaches the mount even if it is busy.
func lazyUnmount(log *slog.Logger, mountpoint string) {
	for _, prog := range []string{"fusermount3", "fusermount"} {
		out, err := exec.Command(prog, "-u", "-z", mountpoint).CombinedOutput()
		if err == nil {
			return
		}
		log.Debug("lazy unmount failed", "prog", prog, "err", err, "output", string(out))
	}
	log.Warn(fmt.Sprintf("Lazy unmount of %s failed", mountpoint))
}

// daemonOptions are the settings of the background mount from the
// command line.
func daemonOptions(e *env, a *argContainer) daemon.Options {
	return daemon.Options{
		NoSyslog: a.nosyslog, Quiet: a.quiet, Debug: a.debug, WPanic: a.wpanic,
		NotifyPID: a.notifypid, Stderr: e.stderr, SetHandler: e.logSwitch.Set, Log: e.log,
	}
}

// forkChild daemonizes (docs/cli.md 5.2): the child's exit code is ours.
func forkChild(e *env) error {
	code, err := daemon.Fork(e.args[0], e.args[1:], daemon.Stdio{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr})
	switch {
	case err != nil:
		return exitcodes.Errorf(exitcodes.ForkChild, "%v", err)
	case code > 0:
		return exitcodes.New(code, nil)
	}
	return nil
}
