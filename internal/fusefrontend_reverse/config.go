package fusefrontend_reverse

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/nametransform"
)

// The view's gocryptfs.conf is the reverse config the mount loaded, kept
// in memory: the bytes it parsed (Args.Config) or, for a mount without a
// config (-masterkey, -zerokey), the bytes NewRootNode read. It is never
// reread from PLAINDIR:
//
//   - the config may be a symlink to a file elsewhere (the reference reads
//     it through the link at mount time); following that link again on
//     every access would let a later swap of the link serve any file
//     outside PLAINDIR, or a FIFO, in the view;
//   - the view's content is encrypted with the master key of the loaded
//     config: a config replaced while mounted (another -init, a -passwd)
//     would describe a different filesystem, or the same one under a new
//     password that the copy's owner may not know yet.
//
// Its attributes come from the stat result of the file as loaded, so
// they stay fixed for the whole mount.

// loadReverseConfig returns the config to show as gocryptfs.conf: conf if
// given, else PLAINDIR/.gocryptfs.reverse.conf read with configfile's
// rules (symlinks followed like the reference; a FIFO, device or huge
// file is refused without blocking). A missing or refused file gives nil:
// then the view has no gocryptfs.conf.
func loadReverseConfig(args *Args, logger *slog.Logger) *configfile.Raw {
	if args.CustomConfig {
		return nil
	}
	if args.Config != nil {
		return args.Config
	}
	raw, err := configfile.ReadRaw(filepath.Join(args.PlainDir, ReverseConfName))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			logger.Warn("the reverse config is unusable; the view shows no "+nametransform.ConfDefaultName, "err", err)
		}
		return nil
	}
	return raw
}

// configNode is the view's gocryptfs.conf: the loaded reverse config,
// read-only, from memory. Safe for concurrent use: everything it serves
// is fixed at NewRootNode.
type configNode struct {
	gofs.Inode
	memLeaf
}

var (
	_ gofs.NodeGetattrer     = (*configNode)(nil)
	_ gofs.NodeOpener        = (*configNode)(nil)
	_ gofs.NodeReader        = (*configNode)(nil)
	_ gofs.NodeGetxattrer    = (*configNode)(nil)
	_ gofs.NodeListxattrer   = (*configNode)(nil)
	_ gofs.NodeStatfser      = (*configNode)(nil)
	_ gofs.NodeSetattrer     = (*configNode)(nil)
	_ gofs.NodeSetxattrer    = (*configNode)(nil)
	_ gofs.NodeRemovexattrer = (*configNode)(nil)
)

// configStableAttr is the go-fuse identity of gocryptfs.conf: the inode
// number of the config file as loaded (the reference shows the same), with
// configGen so that a hard link to that file elsewhere in PLAINDIR, which
// shows encrypted content under the same number, is never merged with it.
func (rn *RootNode) configStableAttr() gofs.StableAttr {
	return gofs.StableAttr{Mode: syscall.S_IFREG, Ino: rn.confIno, Gen: configGen}
}

// newConfigNode returns the inode of gocryptfs.conf below the root. The
// caller checked that rn.conf is set.
func (rn *RootNode) newConfigNode(ctx context.Context, parent *gofs.Inode, out *fuse.Attr) *gofs.Inode {
	ch := parent.NewInode(ctx, &configNode{memLeaf: memLeaf{rn}}, rn.configStableAttr())
	rn.configAttr(out)
	return ch
}

// configAttr fills the attributes of gocryptfs.conf from the stat result
// of the loaded file: a regular file of the loaded size with one link
// (the view has no other name for it), without set-id bits.
func (rn *RootNode) configAttr(out *fuse.Attr) {
	st := &rn.conf.Stat
	fuseutil.AttrFromStat(st, out)
	out.Ino = rn.confIno
	out.Mode = syscall.S_IFREG | uint32(st.Mode&0o777)
	out.Nlink = 1
	out.Size = uint64(len(rn.conf.Data))
	out.Blocks = (out.Size + 511) / 512
	out.Rdev = 0
	fuseutil.ApplyOwner(out, rn.args.ForceOwner)
}

// Getattr reports the fixed attributes.
func (c *configNode) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer fuseutil.Recover(c.rn.log, "Getattr", &errno)
	c.rn.enter("Getattr")
	c.rn.configAttr(&out.Attr)
	return 0
}

// Open allows reading only. The content never changes during the mount,
// so the page cache may be kept.
func (c *configNode) Open(ctx context.Context, flags uint32) (fh gofs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer fuseutil.Recover(c.rn.log, "Open", &errno)
	c.rn.enter("Open")
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Read copies from the loaded bytes.
func (c *configNode) Read(ctx context.Context, f gofs.FileHandle, dest []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	defer fuseutil.Recover(c.rn.log, "Read", &errno)
	c.rn.enter("Read")
	if off < 0 {
		return nil, syscall.EINVAL
	}
	return readAt(dest, c.rn.conf.Data, off), 0
}
