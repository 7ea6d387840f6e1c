package fsck

import (
	"fmt"
	"syscall"
	"testing"
)

// TestXattrsUnsupported: EOPNOTSUPP and ENOSYS from listxattr always mean
// storage without extended attributes; EIO means that only for the entry
// checked first (the root: rclone mount answers EIO everywhere), and a
// damaged entry anywhere else (a bad xattr block on a disk must not turn
// the check clean).
func TestXattrsUnsupported(t *testing.T) {
	for _, c := range []struct {
		err   error
		first bool
		want  bool
	}{
		{syscall.EOPNOTSUPP, true, true},
		{syscall.EOPNOTSUPP, false, true},
		{fmt.Errorf("flistxattr: %w", syscall.ENOSYS), false, true},
		{syscall.EIO, true, true},
		{fmt.Errorf("flistxattr: %w", syscall.EIO), false, false},
		{syscall.EACCES, true, false},
		{syscall.ENOMEM, false, false},
	} {
		if got := xattrsUnsupported(c.err, c.first); got != c.want {
			t.Errorf("xattrsUnsupported(%v, first=%v) = %v, want %v", c.err, c.first, got, c.want)
		}
	}
}
