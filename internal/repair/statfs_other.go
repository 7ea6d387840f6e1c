//go:build !linux

package repair

import "golang.org/x/sys/unix"

// availableBytes is the space that sf reports available to unprivileged
// writers (f_bavail blocks of f_bsize bytes).
func availableBytes(sf *unix.Statfs_t) int64 {
	return int64(sf.Bavail) * int64(sf.Bsize)
}
