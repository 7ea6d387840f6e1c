package fusefrontend

import (
	"syscall"

	"gocryptfs/internal/fuseutil"
)

// toErrno is the single place where internal errors become the errno sent to
// the kernel. Errors that carry a syscall.Errno (directly or wrapped) keep
// it; anything else is a bug or corruption we cannot classify, reported as
// EIO with a log line (naming n by inode and ciphertext path) so it is not
// silently lost.
func (n *Node) toErrno(op string, err error) syscall.Errno {
	errno, known := fuseutil.ToErrno(err)
	if !known {
		n.rn.log.Error("unexpected error, returning EIO", "op", op, "ino", n.StableAttr().Ino, "cipherPath", n.rn.cipherPath(n.relPath()), "err", err)
	}
	return errno
}

// cipherPath returns the backing path of the plaintext path p for log
// lines, which must never contain plaintext names (they may end up in
// syslog). It is only called on the rare paths that log.
func (rn *RootNode) cipherPath(p string) string {
	c, err := rn.EncryptPath(p)
	switch {
	case err != nil:
		return "(unknown)"
	case c == "":
		return "."
	}
	return c
}

// enter runs the test hook (tests only; nothing in the release build,
// hooks.go). It must be called after "defer fuseutil.Recover(...)" so
// that a panic in the hook is caught like a real one.
func (rn *RootNode) enter(op string) { rn.hooks.enter(op) }

// inject returns the failure a test wants at the named step of an
// operation (always nil in the release build), so that tests can reach
// the cleanup paths that real failures take only in rare races.
func (rn *RootNode) inject(step string) error { return rn.hooks.inject(step) }
