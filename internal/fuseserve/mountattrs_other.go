//go:build !linux

package fuseserve

import (
	"errors"
	"fmt"
	"runtime"

	"gocryptfs/internal/mountopts"
)

// applyMountAttrs: mount attributes are set with Linux's mount_setattr
// (mountattrs.go); not supported on this system.
func applyMountAttrs(dir string, a mountopts.MountAttrs) error {
	return fmt.Errorf("mount attributes: not supported on %s", runtime.GOOS)
}

// errMountAttrs marks a failure to set the mount attributes.
var errMountAttrs = errors.New("cannot set the mount options that fusermount3 does not take")
