//go:build !darwin

package fuseserve

import "golang.org/x/sys/unix"

// sockCloexec makes socketpair's descriptors close-on-exec.
const sockCloexec = unix.SOCK_CLOEXEC
