package fusefrontend

import (
	"errors"

	"gocryptfs/internal/syscallcompat"
)

// getxattrFast reads the backing attribute cAttr of n with one
// getxattrat relative to the cached parent fd (lgetxattr on
// /proc/self/fd/<parent fd>/<backing name> before Linux 6.13, see
// syscallcompat.XattrAt) instead of opening an O_PATH handle, reading
// through it and closing it. "ls -l" asks for
// security.selinux and system.posix_acl_access of every file, nearly
// always in vain, so this saves three system calls per request (the
// resolving stat, open and close). The name is a single component and the
// l- variant does not follow a final symlink, so the same entry is reached
// as through the O_PATH handle. Only a value or ENODATA is answered here
// (handled), which proves that the regular name exists; anything else,
// e.g. ENOENT (a -badname or conflict name), no /proc or a value larger
// than the buffer, goes the regular way.
func (n *Node) getxattrFast(cAttr string) (val []byte, handled bool, err error) {
	ref, cName, ok := n.rn.regularName(n.relPath())
	if !ok {
		return nil, false, nil
	}
	defer ref.release()
	var buf [256]byte
	sz, err := n.rn.xattrAt.Lgetxattr(ref.fd, cName, cAttr, buf[:])
	switch {
	case err == nil:
		return append([]byte(nil), buf[:sz]...), true, nil
	case errors.Is(err, syscallcompat.NoAttr):
		return nil, true, err
	}
	return nil, false, nil
}

// regularName returns the parent directory and the regular backing name
// of the plaintext path p, without the fallbacks of child (-badname and
// sync conflict names), which only apply when no entry of the regular
// name exists and so cost a stat up front. A caller that reaches an
// existing entry through the regular name has reached the entry that
// child would return; on ENOENT it must take the full way.
func (rn *RootNode) regularName(p string) (ref *dirRef, cName string, ok bool) {
	if p == "" {
		return rn.rootRef.acquire(), ".", true
	}
	dir, name := splitPath(p)
	ref, iv, err := rn.openDirRef(dir)
	if err != nil {
		return nil, "", false
	}
	cName, _, err = rn.encryptName(name, iv)
	if err != nil {
		ref.release()
		return nil, "", false
	}
	return ref, cName, true
}
