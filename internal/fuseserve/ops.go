package fuseserve

// One wrapper per request type of fuse.RawFileSystem: count it while it
// runs, trace it when it returns.

import "github.com/hanwen/go-fuse/v2/fuse"

func (w *rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Lookup(cancel, h, name, out)
	if w.trace != nil {
		ts := s
		if s.Ok() && out.NodeId == 0 {
			// go-fuse answers a cacheable miss as a negative entry.
			ts = fuse.ENOENT
		}
		w.log("LOOKUP", h.NodeId, ts, "name", name, "ino", out.NodeId)
	}
	return s
}

func (w *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.GetAttr(cancel, in, out)
	if w.trace != nil {
		w.log("GETATTR", in.NodeId, s, "fh", in.Fh())
	}
	return s
}

func (w *rawFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.SetAttr(cancel, in, out)
	if w.trace != nil {
		w.log("SETATTR", in.NodeId, s, "valid", in.Valid, "size", in.Size, "mode", in.Mode)
	}
	return s
}

func (w *rawFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Mknod(cancel, in, name, out)
	if w.trace != nil {
		w.log("MKNOD", in.NodeId, s, "name", name, "mode", in.Mode)
	}
	return s
}

func (w *rawFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Mkdir(cancel, in, name, out)
	if w.trace != nil {
		w.log("MKDIR", in.NodeId, s, "name", name, "mode", in.Mode)
	}
	return s
}

func (w *rawFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Unlink(cancel, h, name)
	if w.trace != nil {
		w.log("UNLINK", h.NodeId, s, "name", name)
	}
	return s
}

func (w *rawFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Rmdir(cancel, h, name)
	if w.trace != nil {
		w.log("RMDIR", h.NodeId, s, "name", name)
	}
	return s
}

func (w *rawFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName string, newName string) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Rename(cancel, in, oldName, newName)
	if w.trace != nil {
		w.log("RENAME", in.NodeId, s, "name", oldName, "newdir", in.Newdir, "newname", newName, "flags", in.Flags)
	}
	return s
}

func (w *rawFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Link(cancel, in, name, out)
	if w.trace != nil {
		w.log("LINK", in.NodeId, s, "name", name, "old", in.Oldnodeid)
	}
	return s
}

func (w *rawFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, pointedTo string, linkName string, out *fuse.EntryOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Symlink(cancel, h, pointedTo, linkName, out)
	if w.trace != nil {
		w.log("SYMLINK", h.NodeId, s, "name", linkName)
	}
	return s
}

func (w *rawFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Access(cancel, in)
	if w.trace != nil {
		w.log("ACCESS", in.NodeId, s, "mask", in.Mask)
	}
	return s
}

func (w *rawFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.SetXAttr(cancel, in, attr, data)
	if w.trace != nil {
		w.log("SETXATTR", in.NodeId, s, "attr", attr, "size", len(data))
	}
	return s
}

func (w *rawFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.RemoveXAttr(cancel, h, attr)
	if w.trace != nil {
		w.log("REMOVEXATTR", h.NodeId, s, "attr", attr)
	}
	return s
}

func (w *rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.Create(cancel, in, name, out)
	w.opened(s)
	if w.trace != nil {
		w.log("CREATE", in.NodeId, s, "name", name, "flags", in.Flags, "mode", in.Mode, "fh", out.Fh)
	}
	return s
}

func (w *rawFS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Tmpfile(cancel, in, out)
	if w.trace != nil {
		w.log("TMPFILE", in.NodeId, s, "flags", in.Flags)
	}
	return s
}

func (w *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.Open(cancel, in, out)
	w.opened(s)
	if w.trace != nil {
		w.log("OPEN", in.NodeId, s, "flags", in.Flags, "fh", out.Fh)
	}
	return s
}

func (w *rawFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.Lseek(cancel, in, out)
	if w.trace != nil {
		w.log("LSEEK", in.NodeId, s, "fh", in.Fh, "off", in.Offset, "whence", in.Whence)
	}
	return s
}

func (w *rawFS) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.GetLk(cancel, in, out)
	if w.trace != nil {
		w.log("GETLK", in.NodeId, s, "fh", in.Fh, "type", in.Lk.Typ)
	}
	return s
}

func (w *rawFS) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.SetLk(cancel, in)
	if w.trace != nil {
		w.log("SETLK", in.NodeId, s, "fh", in.Fh, "type", in.Lk.Typ, "flags", in.LkFlags)
	}
	return s
}

func (w *rawFS) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.SetLkw(cancel, in)
	if w.trace != nil {
		w.log("SETLKW", in.NodeId, s, "fh", in.Fh, "type", in.Lk.Typ, "flags", in.LkFlags)
	}
	return s
}

func (w *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	if w.locks != nil {
		// go-fuse's node API does not pass the lock owner of FLUSH.
		w.locks.CloseLockOwner(in.NodeId, in.LockOwner)
	}
	s := w.RawFileSystem.Flush(cancel, in)
	if w.trace != nil {
		w.log("FLUSH", in.NodeId, s, "fh", in.Fh)
	}
	return s
}

func (w *rawFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.Fsync(cancel, in)
	if w.trace != nil {
		w.log("FSYNC", in.NodeId, s, "fh", in.Fh)
	}
	return s
}

func (w *rawFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	s := w.RawFileSystem.Fallocate(cancel, in)
	if w.trace != nil {
		w.log("FALLOCATE", in.NodeId, s, "fh", in.Fh, "off", in.Offset, "len", in.Length, "mode", in.Mode)
	}
	return s
}

func (w *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.OpenDir(cancel, in, out)
	w.opened(s)
	if w.trace != nil {
		w.log("OPENDIR", in.NodeId, s, "fh", out.Fh)
	}
	return s
}

func (w *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.ReadDir(cancel, in, out)
	if w.trace != nil {
		w.log("READDIR", in.NodeId, s, "fh", in.Fh, "off", in.Offset)
	}
	return s
}

func (w *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.ReadDirPlus(cancel, in, out)
	if w.trace != nil {
		w.log("READDIRPLUS", in.NodeId, s, "fh", in.Fh, "off", in.Offset)
	}
	return s
}

func (w *rawFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.FsyncDir(cancel, in)
	if w.trace != nil {
		w.log("FSYNCDIR", in.NodeId, s, "fh", in.Fh)
	}
	return s
}

func (w *rawFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.StatFs(cancel, h, out)
	if w.trace != nil {
		w.log("STATFS", h.NodeId, s)
	}
	return s
}

func (w *rawFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Statx(cancel, in, out)
	if w.trace != nil {
		w.log("STATX", in.NodeId, s)
	}
	return s
}

func (w *rawFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	n, s := w.RawFileSystem.CopyFileRange(cancel, in)
	if w.trace != nil {
		w.log("COPY_FILE_RANGE", in.NodeId, s, "fh", in.FhIn, "off", in.OffIn, "len", in.Len, "written", n)
	}
	return n, s
}

func (w *rawFS) Forget(nodeid, nlookup uint64) {
	w.inflight.Add(1) // the kernel forgets on its own: no activity
	defer w.inflight.Done()
	w.RawFileSystem.Forget(nodeid, nlookup)
	if w.trace != nil {
		w.log("FORGET", nodeid, fuse.OK, "nlookup", nlookup)
	}
}

func (w *rawFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	b, s := w.RawFileSystem.Readlink(cancel, h)
	if w.trace != nil {
		w.log("READLINK", h.NodeId, s, "len", len(b))
	}
	return b, s
}

func (w *rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	n, s := w.RawFileSystem.GetXAttr(cancel, h, attr, dest)
	if w.trace != nil {
		w.log("GETXATTR", h.NodeId, s, "attr", attr, "bufsize", len(dest), "size", n)
	}
	return n, s
}

func (w *rawFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	n, s := w.RawFileSystem.ListXAttr(cancel, h, dest)
	if w.trace != nil {
		w.log("LISTXATTR", h.NodeId, s, "bufsize", len(dest), "size", n)
	}
	return n, s
}

// Read: go-fuse consumes the ReadResult after Read returned. Both
// frontends return bytes that are already decrypted (or encrypted), so no
// key is used once Read has returned.
func (w *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	r, s := w.RawFileSystem.Read(cancel, in, buf)
	if w.trace != nil {
		w.log("READ", in.NodeId, s, "fh", in.Fh, "off", in.Offset, "size", in.Size)
	}
	return r, s
}

func (w *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	n, s := w.RawFileSystem.Write(cancel, in, data)
	if w.trace != nil {
		w.log("WRITE", in.NodeId, s, "fh", in.Fh, "off", in.Offset, "size", len(data), "written", n)
	}
	return n, s
}

func (w *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	w.begin()
	defer w.inflight.Done()
	cancel, end := w.patient(cancel, in.Caller.Pid)
	defer end()
	n, s := w.RawFileSystem.Writev(cancel, in, data)
	if w.trace != nil {
		w.log("WRITE", in.NodeId, s, "fh", in.Fh, "off", in.Offset, "size", in.Size, "written", n)
	}
	return n, s
}

func (w *rawFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	w.begin()
	defer w.inflight.Done()
	s := w.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
	if w.trace != nil {
		w.log("IOCTL", in.NodeId, s, "cmd", in.Cmd)
	}
	return s
}

func (w *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	w.begin()
	defer w.inflight.Done()
	w.RawFileSystem.Release(cancel, in)
	w.openFiles.Add(-1)
	if w.trace != nil {
		w.log("RELEASE", in.NodeId, fuse.OK, "fh", in.Fh)
	}
}

func (w *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	w.begin()
	defer w.inflight.Done()
	w.RawFileSystem.ReleaseDir(in)
	w.openFiles.Add(-1)
	if w.trace != nil {
		w.log("RELEASEDIR", in.NodeId, fuse.OK, "fh", in.Fh)
	}
}
