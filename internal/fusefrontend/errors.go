package fusefrontend

import (
	"syscall"

	"gocryptfs/internal/fuseutil"
)

// toErrno is the single place where internal errors become the errno sent to
// the kernel. Errors that carry a syscall.Errno (directly or wrapped) keep
// it; anything else is a bug or corruption we cannot classify, reported as
// EIO with a log line so it is not silently lost.
func (rn *RootNode) toErrno(op string, err error) syscall.Errno {
	errno, known := fuseutil.ToErrno(err)
	if !known {
		rn.log.Error("unexpected error, returning EIO", "op", op, "err", err)
	}
	return errno
}

// enter counts a FUSE request and runs the test hook. It must be called
// after "defer rn.recoverOp(...)" so that a panic in the hook is caught.
func (rn *RootNode) enter(op string) {
	rn.opCount.Add(1)
	if h := rn.testHook.Load(); h != nil {
		(*h)(op)
	}
}

// inject returns the failure a test wants at the named step of an
// operation (nil in production), so that tests can reach the cleanup paths
// that real failures take only in rare races.
func (rn *RootNode) inject(step string) error {
	if h := rn.testFail.Load(); h != nil {
		return (*h)(step)
	}
	return nil
}
