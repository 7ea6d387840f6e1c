package main

import (
	"fmt"

	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/tlog"
)

// warnBackingFS tells the user what the location of CIPHERDIR means when
// several machines use it (issue: sync folders and network filesystems).
// At -init (mounting false) it warns about sync folders and network
// filesystems and says which options to use; at mount time it warns when
// -sharedstorage cannot be safe between machines because the filesystem
// does not enforce byte-range locks between them, and suggests
// -sharedstorage on a network filesystem.
func warnBackingFS(e *env, dir string, mounting, sharedstorage bool) {
	info, err := mountinfo.Detect(dir)
	if err != nil {
		e.log.Debug("cannot tell the backing filesystem", "err", err)
		return
	}
	if !mounting {
		if m := mountinfo.SyncFolder(dir); m != "" {
			e.log.Warn(fmt.Sprintf("CIPHERDIR is inside a folder synchronised by a sync tool (found %s). "+
				"Changes made on two machines before they synced show up as conflict copies in the mount. "+
				"If the sync service limits the length of names or paths, create the filesystem with -longnamemax (e.g. -longnamemax 62).", m), tlog.Yellow())
		}
	}
	if !info.Network {
		return
	}
	switch {
	case sharedstorage && info.Locks == mountinfo.LocksNotShared:
		e.log.Warn(fmt.Sprintf("-sharedstorage: CIPHERDIR is on %s, which does not pass byte-range locks between machines. "+
			"Mounts on this machine are protected against each other, but a mount on another machine writing the same file at the same time can corrupt it.", info.Name), tlog.Yellow())
	case sharedstorage && info.Locks == mountinfo.LocksUnknown:
		e.log.Warn(fmt.Sprintf("-sharedstorage: CIPHERDIR is on %s; whether it enforces byte-range locks between machines is unknown, "+
			"so concurrent writes from two machines may not be safe.", info.Name), tlog.Yellow())
	case !sharedstorage:
		e.log.Info(fmt.Sprintf("CIPHERDIR is on a network filesystem (%s). If more than one mount uses it at the same time, mount every one with -sharedstorage.", info.Name), tlog.Yellow())
	}
}
