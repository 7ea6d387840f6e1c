package repair

import "golang.org/x/sys/unix"

// availableBytes is the space that sf reports available to unprivileged
// writers: in fragment-size units where the filesystem reports them.
func availableBytes(sf *unix.Statfs_t) int64 {
	avail := int64(sf.Bavail) * sf.Frsize
	if sf.Frsize == 0 {
		avail = int64(sf.Bavail) * sf.Bsize
	}
	return avail
}
