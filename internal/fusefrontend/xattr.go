package fusefrontend

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Extended attributes (docs/format.md section 8): names are stored encrypted as
// user.gocryptfs.<...>, values encrypted; the two POSIX ACL names pass
// through unencrypted. All calls go through an O_PATH handle of the backing
// entry (via /proc/self/fd), which works for every file type and never
// follows a symlink.
//
// The kernel leaves the permission checks for system.* attributes other
// than ACLs to the filesystem, and this one stores them as user.
// attributes. Setting and removing therefore run with the caller's
// identity (asCaller, a no-op unless root with AllowOther), so the backing
// filesystem applies its rules for the caller: write permission for the
// encrypted attributes, ownership (or CAP_FOWNER) for the POSIX ACLs that
// pass through.

const securityCapability = "security.capability"

// encryptXattrName returns the backing name of the attribute attr,
// remembered in rn.xattrs (it is a pure function of the key and attr): the
// same few names are asked for on every file.
func (rn *RootNode) encryptXattrName(attr string) (string, error) {
	if c, _, ok := rn.xattrs.get(nil, attr); ok {
		return c, nil
	}
	c, err := rn.nt.EncryptXattrName(attr)
	if err != nil {
		return "", err
	}
	rn.xattrs.put(nil, attr, c, "")
	return c, nil
}

// withPathFd runs fn with an O_PATH fd of n's backing entry.
func (n *Node) withPathFd(fn func(fd int) error) error {
	e, err := n.self()
	if err != nil {
		return err
	}
	defer e.close()
	fd, err := syscallcompat.OpenPathAt(e.dirfd, e.cName)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(fd)
	return fn(fd)
}

var _ = (fs.NodeGetxattrer)((*Node)(nil))

// Getxattr reads and decrypts one attribute.
func (n *Node) Getxattr(ctx context.Context, attr string, dest []byte) (size uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Getxattr", &errno)
	rn.enter("Getxattr")
	if rn.args.NoXattr {
		return 0, syscallcompat.NoAttr
	}
	if attr == securityCapability && !rn.args.Suid {
		// The kernel asks for this on every write; answering without a
		// backing lookup keeps writes fast.
		return 0, syscall.EOPNOTSUPP
	}
	cAttr, err := rn.encryptXattrName(attr)
	if err != nil {
		return 0, n.toErrno("Getxattr", err)
	}
	var val []byte
	decode := func(v []byte, err error) error {
		if err != nil {
			return err
		}
		if nametransform.IsACLName(attr) {
			val = v
			return nil
		}
		val, err = rn.nt.DecryptXattrValue(v)
		if err != nil {
			if p := n.relPath(); rn.firstWarn("xattr:" + p + "\x00" + attr) {
				rn.log.Warn("undecryptable xattr value", "path", rn.cipherPath(p), "attr", cAttr, "err", err)
			}
		}
		return err
	}
	if v, handled, ferr := n.getxattrFast(cAttr); handled {
		err = decode(v, ferr)
	} else {
		err = n.withPathFd(func(fd int) error {
			return decode(syscallcompat.FgetxattrAll(fd, cAttr))
		})
	}
	if err != nil {
		return 0, n.toErrno("Getxattr", err)
	}
	return fuseutil.XattrResult(dest, val)
}

var _ = (fs.NodeSetxattrer)((*Node)(nil))

// Setxattr encrypts and stores one attribute; flags (XATTR_CREATE,
// XATTR_REPLACE) are passed through.
func (n *Node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Setxattr", &errno)
	rn.enter("Setxattr")
	if rn.args.NoXattr {
		return syscall.EOPNOTSUPP
	}
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	cAttr, err := rn.encryptXattrName(attr)
	if err != nil {
		return n.toErrno("Setxattr", err)
	}
	val := data
	if !nametransform.IsACLName(attr) {
		val = rn.nt.EncryptXattrValue(data)
	}
	return n.toErrno("Setxattr", n.withPathFd(func(fd int) error {
		err := rn.asCaller(ctx, func() error {
			return syscallcompat.Fsetxattr(fd, cAttr, val, int(flags))
		})
		if err == nil && attr == aclAccess {
			err = rn.killSgidAfterACL(ctx, fd)
		}
		return err
	}))
}

var _ = (fs.NodeRemovexattrer)((*Node)(nil))

// Removexattr removes one attribute.
func (n *Node) Removexattr(ctx context.Context, attr string) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Removexattr", &errno)
	rn.enter("Removexattr")
	if rn.args.NoXattr {
		return syscall.EOPNOTSUPP
	}
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	cAttr, err := rn.encryptXattrName(attr)
	if err != nil {
		return n.toErrno("Removexattr", err)
	}
	return n.toErrno("Removexattr", n.withPathFd(func(fd int) error {
		return rn.asCaller(ctx, func() error {
			return syscallcompat.Fremovexattr(fd, cAttr)
		})
	}))
}

var _ = (fs.NodeListxattrer)((*Node)(nil))

// Listxattr lists the decryptable attribute names and the ACL names.
func (n *Node) Listxattr(ctx context.Context, dest []byte) (size uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Listxattr", &errno)
	rn.enter("Listxattr")
	if rn.args.NoXattr {
		return 0, 0
	}
	var buf []byte
	err := n.withPathFd(func(fd int) error {
		names, err := syscallcompat.FlistxattrAll(fd)
		if err != nil {
			return err
		}
		for _, c := range names {
			name, err := rn.nt.DecryptXattrName(c)
			if err != nil {
				if !errors.Is(err, nametransform.ErrHiddenXattr) {
					if p := n.relPath(); rn.firstWarn("xattrname:" + p + "\x00" + c) {
						rn.log.Warn("undecryptable xattr name hidden", "path", rn.cipherPath(p), "name", c, "err", err)
					}
				}
				continue
			}
			buf = append(buf, name...)
			buf = append(buf, 0)
		}
		return nil
	})
	if err != nil {
		return 0, n.toErrno("Listxattr", err)
	}
	return fuseutil.XattrResult(dest, buf)
}
