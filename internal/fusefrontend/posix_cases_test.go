//go:build linux

package fusefrontend

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPosixTable runs the POSIX table (posix_table_test.go): each case on
// a plain directory and on a mount, comparing what they observe.
func TestPosixTable(t *testing.T) {
	runPosixTable(t, posixCases())
}

func posixCases() []posixCase {
	cases := []posixCase{
		{name: "readdir-dots", run: caseReaddirDots},
		{name: "fstat-open-dir-renamed-over", run: caseRenameOverOpenDir},
		{name: "file-handles", run: caseFileHandles},
		{name: "tmpfile", run: caseTmpfile},
		{name: "rename-whiteout", run: caseWhiteout},
		{name: "setgid-dir", run: caseSetgidDir},
		{name: "setgid-dir-acl", acl: true, run: caseSetgidDir},
		{name: "suid-sgid-clearing", run: caseSuidClearing},
		{name: "suid-sgid-clearing-acl", acl: true, run: caseSuidClearing},
		{name: "acl", acl: true, run: caseACL},
	}
	for _, s := range seekCases {
		cases = append(cases, posixCase{name: "seek-" + s.name, run: func(e *posixEnv) { runSeekCase(e, s) }})
	}
	for _, ko := range []string{"noatime", "relatime", "strictatime"} {
		cases = append(cases, posixCase{name: "atime-" + ko, ko: []string{ko}, run: caseAtime})
	}
	for _, ko := range [][]string{{"relatime"}, {"nodiratime"}, {"noatime"}} {
		cases = append(cases, posixCase{name: "diratime-" + strings.Join(ko, "-"), ko: ko, run: caseDirAtime})
	}
	return cases
}

// caseReaddirDots: "." and ".." are listed, with the right inode numbers,
// also after rewinddir.
func caseReaddirDots(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("d"), 0o755))
	e.must("mkdir", os.Mkdir(e.p("d/sub"), 0o755))
	e.write("d/f", []byte("x"), 0)
	e.list("root", "")
	e.list("d", "d")
	e.list("sub", "d/sub")
	ino := func(rel string) uint64 {
		var st unix.Stat_t
		e.must("stat", unix.Stat(e.p(rel), &st))
		return st.Ino
	}
	fd, err := unix.Open(e.p("d/sub"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.must("open", err)
	defer unix.Close(fd)
	first, err := dirents(fd)
	e.must("getdents", err)
	for _, de := range first {
		switch de.Name {
		case ".":
			e.rec(". is the dir itself: %v", de.Ino == ino("d/sub"))
		case "..":
			e.rec(".. is the parent: %v", de.Ino == ino("d"))
		}
	}
	_, err = unix.Seek(fd, 0, unix.SEEK_SET)
	e.res("rewinddir", err)
	again, err := dirents(fd)
	e.must("getdents again", err)
	e.rec("entries before/after rewind: %d %d", len(first), len(again))
	// Root's "..": the root itself on a mount, the real parent in the
	// plain temp dir; record only that it is a directory entry.
	rfd, err := unix.Open(e.p(""), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.must("open root", err)
	defer unix.Close(rfd)
	ents, err := dirents(rfd)
	e.must("getdents root", err)
	for _, de := range ents {
		if de.Name == "." {
			e.rec("root . is root: %v", de.Ino == ino(""))
		}
	}
	// The root has an inode number of its own, not 0 (issue 21), and
	// its children's ".." say so too.
	e.rec("root inode non-zero: %v", ino("") != 0)
	dfd, err := unix.Open(e.p("d"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.must("open d", err)
	defer unix.Close(dfd)
	dents, err := dirents(dfd)
	e.must("getdents d", err)
	for _, de := range dents {
		if de.Name == ".." {
			e.rec("d/.. is root: %v", de.Ino == ino(""))
		}
	}
}

// caseRenameOverOpenDir: rename(A, B) while B is open; the open B keeps
// answering fstat (go-fuse's posixtest RenameOpenDir, plus more fields).
func caseRenameOverOpenDir(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("dir1"), 0o755))
	e.must("mkdir", os.Mkdir(e.p("dir2"), 0o700))
	var before unix.Stat_t
	e.must("stat", unix.Stat(e.p("dir2"), &before))
	fd, err := unix.Open(e.p("dir2"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.must("open", err)
	defer unix.Close(fd)
	e.res("rename dir1 dir2", unix.Rename(e.p("dir1"), e.p("dir2")))
	if st := e.fstat("fstat open dir2", fd); st != nil {
		e.rec("same inode as before: %v", st.Ino == before.Ino)
	}
	e.listFd("getdents open dir2", fd)
	e.res("fchmod open dir2", unix.Fchmod(fd, 0o750))
	e.fstat("fstat after fchmod", fd)
	e.res("fsync open dir2", unix.Fsync(fd))
	e.lstat("dir2 now", "dir2")
	e.list("root", "")
}

// caseFileHandles: name_to_handle_at/open_by_handle_at on a file and a
// directory, also after the kernel dropped its caches and after a
// remount; a deleted file's handle is stale.
func caseFileHandles(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("d"), 0o755))
	e.write("d/f", []byte("file handle content"), 0)
	e.write("gone", []byte("x"), 0)
	handle := func(rel string) unix.FileHandle {
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, e.p(rel), 0)
		e.res("name_to_handle_at "+rel, err)
		return h
	}
	hf, hd, hg, hr := handle("d/f"), handle("d"), handle("gone"), handle("")
	forgotten := e.forgetWaiter("gone")
	e.must("unlink", os.Remove(e.p("gone")))
	forgotten()
	open := func(label string, h unix.FileHandle, flags int) {
		if h.Size() == 0 {
			return
		}
		mfd, err := unix.Open(e.p(""), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		e.must("open mount", err)
		defer unix.Close(mfd)
		fd, err := unix.OpenByHandleAt(mfd, h, flags)
		e.res(label, err)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		e.fstat(label+" fstat", fd)
		if flags&unix.O_DIRECTORY != 0 {
			e.listFd(label+" list", fd)
			return
		}
		buf := make([]byte, 100)
		n, err := unix.Pread(fd, buf, 0)
		e.rec("%s read: %q %s", label, buf[:max(n, 0)], errName(err))
	}
	round := func(when string) {
		open("file "+when, hf, unix.O_RDONLY)
		open("dir "+when, hd, unix.O_RDONLY|unix.O_DIRECTORY)
		open("deleted "+when, hg, unix.O_RDONLY)
		open("root "+when, hr, unix.O_RDONLY|unix.O_DIRECTORY)
	}
	round("fresh")
	dropCaches(e)
	round("after drop_caches")
	e.remount()
	round("after remount")
}

// dropCaches makes the kernel forget unused dentries and inodes, on the
// mount as everywhere else.
func dropCaches(e *posixEnv) {
	e.t.Helper()
	unix.Sync()
	e.must("drop_caches", os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0))
}

// caseTmpfile: O_TMPFILE makes an unnamed file that linkat names later;
// with O_EXCL it can never be linked.
func caseTmpfile(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("d"), 0o755))
	fd, err := unix.Open(e.p("d"), unix.O_TMPFILE|unix.O_RDWR, 0o640)
	e.res("open O_TMPFILE", err)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	_, err = unix.Pwrite(fd, []byte("temporary content"), 0)
	e.res("pwrite", err)
	e.fstat("fstat unnamed", fd)
	e.list("d before link", "d")
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	e.res("linkat", unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, e.p("d/named"), unix.AT_SYMLINK_FOLLOW))
	e.fstat("fstat linked", fd)
	e.lstat("named", "d/named")
	e.list("d after link", "d")
	b, err := os.ReadFile(e.p("d/named"))
	e.rec("read named: %q %s", b, errName(err))
	e.res("linkat again", unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, e.p("d/second"), unix.AT_SYMLINK_FOLLOW))
	e.lstat("named after second link", "d/named")

	xfd, err := unix.Open(e.p("d"), unix.O_TMPFILE|unix.O_RDWR|unix.O_EXCL, 0o600)
	e.res("open O_TMPFILE|O_EXCL", err)
	if err == nil {
		defer unix.Close(xfd)
		xproc := "/proc/self/fd/" + strconv.Itoa(xfd)
		e.res("linkat O_EXCL file", unix.Linkat(unix.AT_FDCWD, xproc, unix.AT_FDCWD, e.p("d/never"), unix.AT_SYMLINK_FOLLOW))
	}
	_, err = unix.Open(e.p("d/named"), unix.O_TMPFILE|unix.O_RDWR, 0o600)
	e.res("O_TMPFILE on a file", err)
	_, err = unix.Open(e.p("d"), unix.O_TMPFILE|unix.O_RDONLY, 0o600)
	e.res("O_TMPFILE read-only", err)
}

// caseWhiteout: renameat2 with RENAME_WHITEOUT leaves a 0/0 character
// device in place of the source (what overlayfs needs).
func caseWhiteout(e *posixEnv) {
	e.write("a", []byte("aaa"), 0)
	e.write("c", []byte("ccc"), 0)
	e.write("d", []byte("ddd"), 0)
	e.must("mkdir", os.Mkdir(e.p("dir"), 0o755))
	rn2 := func(label, from, to string, flags uint) {
		e.res(label, unix.Renameat2(unix.AT_FDCWD, e.p(from), unix.AT_FDCWD, e.p(to), flags))
	}
	rn2("whiteout a->b", "a", "b", unix.RENAME_WHITEOUT)
	e.lstat("a", "a")
	e.lstat("b", "b")
	rn2("whiteout c->d (replacing)", "c", "d", unix.RENAME_WHITEOUT)
	e.lstat("c", "c")
	rn2("whiteout|noreplace b->d", "b", "d", unix.RENAME_WHITEOUT|unix.RENAME_NOREPLACE)
	rn2("whiteout|exchange b->d", "b", "d", unix.RENAME_WHITEOUT|unix.RENAME_EXCHANGE)
	rn2("whiteout dir->dir2", "dir", "dir2", unix.RENAME_WHITEOUT)
	e.lstat("dir", "dir")
	e.lstat("dir2", "dir2")
	e.list("root", "")
	e.res("unlink whiteout", unix.Unlink(e.p("a")))
	e.list("root after unlink", "")
}

// caseSetgidDir: entries created in a setgid directory get its group, new
// directories also the setgid bit.
func caseSetgidDir(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("sg"), 0o755))
	e.must("chown", os.Lchown(e.p("sg"), -1, 4242))
	e.must("chmod", unix.Chmod(e.p("sg"), 0o2775))
	e.lstat("sg", "sg")
	e.write("sg/f", nil, 0)
	e.res("mkdir", unix.Mkdir(e.p("sg/d"), 0o755))
	e.res("mkfifo", unix.Mkfifo(e.p("sg/p"), 0o644))
	e.res("symlink", unix.Symlink("target", e.p("sg/l")))
	e.res("mkdir nested", unix.Mkdir(e.p("sg/d/n"), 0o700))
	fd, err := unix.Open(e.p("sg"), unix.O_TMPFILE|unix.O_RDWR, 0o600)
	e.res("O_TMPFILE", err)
	if err == nil {
		e.fstat("tmpfile", fd)
		unix.Close(fd)
	}
	for _, n := range []string{"sg/f", "sg/d", "sg/p", "sg/d/n"} {
		e.lstat(n, n)
	}
	var st unix.Stat_t
	e.must("lstat", unix.Lstat(e.p("sg/l"), &st))
	e.rec("symlink gid: %d", st.Gid)
}

// withoutFsetid runs fn on an OS thread without CAP_FSETID, as an
// unprivileged owner would act: the kernel then clears set-id bits on
// write, chown and chmod as it does for ordinary users. The thread is
// discarded afterwards.
func withoutFsetid(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			done <- err
			return
		}
		data[0].Effective &^= 1 << unix.CAP_FSETID
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatalf("dropping CAP_FSETID: %v", err)
	}
}

// caseSuidClearing: writes, truncation, chown and chmod clear set-id bits
// as on ext4, for a caller without CAP_FSETID.
func caseSuidClearing(e *posixEnv) {
	mk := func(rel string, mode uint32) {
		e.write(rel, []byte("data"), 0)
		e.must("chmod", unix.Chmod(e.p(rel), mode))
	}
	mk("suid", 0o4755)
	mk("sgid-x", 0o2755)
	mk("sgid-nox", 0o2745)
	mk("trunc", 0o6755)
	mk("chown", 0o6755)
	mk("chmod", 0o755)
	e.must("chown", os.Lchown(e.p("chmod"), -1, 4242))
	withoutFsetid(e.t, func() {
		for _, n := range []string{"suid", "sgid-x", "sgid-nox"} {
			fd, err := unix.Open(e.p(n), unix.O_WRONLY, 0)
			e.res("open "+n, err)
			if err == nil {
				_, err = unix.Pwrite(fd, []byte("more"), 4)
				e.res("write "+n, err)
				unix.Close(fd)
			}
		}
		e.res("truncate", unix.Truncate(e.p("trunc"), 2))
		e.res("chown", unix.Lchown(e.p("chown"), 0, 0))
		e.res("chmod g+s, not in group", unix.Chmod(e.p("chmod"), 0o2755))
	})
	for _, n := range []string{"suid", "sgid-x", "sgid-nox", "trunc", "chown", "chmod"} {
		e.lstat(n, n)
	}
}

// seekCase is a file layout for the SEEK_DATA/SEEK_HOLE cases.
type seekCase struct {
	name string
	// writes are (offset, length) pairs written with non-zero bytes.
	writes [][2]int64
	// size, if set, is the final size set with ftruncate.
	size int64
	// offs are offsets to ask about besides the generated ones.
	offs []int64
}

var seekCases = []seekCase{
	{name: "empty"},
	{name: "dense", writes: [][2]int64{{0, 3*4096 + 1000}}},
	// The case of issue 12: a 4 MiB hole, then data; SEEK_DATA from the
	// hole's middle answered one block early.
	{name: "issue12", writes: [][2]int64{{4243456, 4096}}, offs: []int64{1 << 21, 4239360, 4243455, 4243457}},
	{name: "starts-with-hole", writes: [][2]int64{{8192, 4096}}},
	{name: "ends-with-hole-aligned", writes: [][2]int64{{0, 4096}}, size: 4 * 4096},
	{name: "one-block-hole", writes: [][2]int64{{0, 4096}, {8192, 4096}}},
	{name: "holes-smaller-than-a-block", writes: [][2]int64{{0, 100}, {5000, 100}, {9000, 100}}},
	{name: "unaligned-data", writes: [][2]int64{{10000, 10}}},
	{name: "many-runs", writes: [][2]int64{{0, 4096}, {2 * 4096, 2 * 4096}, {7 * 4096, 10}, {100 * 4096, 5000}, {200*4096 + 17, 100}}},
	{name: "partial-last-block-after-hole", writes: [][2]int64{{0, 10}, {5 * 4096, 4000}}},
}

// runSeekCase builds the layout of s and records SEEK_DATA and SEEK_HOLE
// from many offsets: block boundaries and their neighbours, inside the
// last partial block, at and past the end of file.
func runSeekCase(e *posixEnv, s seekCase) {
	fd, err := unix.Open(e.p("f"), unix.O_RDWR|unix.O_CREAT, 0o644)
	e.must("create", err)
	defer unix.Close(fd)
	for _, w := range s.writes {
		_, err := unix.Pwrite(fd, bytes.Repeat([]byte{0x5a}, int(w[1])), w[0])
		e.must("pwrite", err)
	}
	if s.size > 0 {
		e.must("ftruncate", unix.Ftruncate(fd, s.size))
	}
	var st unix.Stat_t
	e.must("fstat", unix.Fstat(fd, &st))
	size := st.Size
	e.rec("size %d", size)
	offs := slices.Clone(s.offs)
	for b := int64(0); b <= size/4096+1 && b < 64; b++ {
		offs = append(offs, b*4096-1, b*4096, b*4096+1, b*4096+2048)
	}
	for _, w := range s.writes {
		offs = append(offs, w[0]-1, w[0], w[0]+w[1]-1, w[0]+w[1])
	}
	offs = append(offs, size-1, size, size+1, size+4096, 1<<40)
	slices.Sort(offs)
	offs = slices.Compact(offs)
	for _, off := range offs {
		if off < 0 {
			continue
		}
		d, errD := unix.Seek(fd, off, unix.SEEK_DATA)
		h, errH := unix.Seek(fd, off, unix.SEEK_HOLE)
		e.rec("off %d: data %d %s, hole %d %s", off, d, errName(errD), h, errName(errH))
	}
}

// caseAtime: reading and executing a file changes its atime as the mount
// option (noatime, relatime, strictatime) says.
func caseAtime(e *posixEnv) {
	script := []byte("#!/bin/sh\nexit 0\n")
	e.write("f", script, 0)
	e.must("chmod", unix.Chmod(e.p("f"), 0o755))
	now := time.Now()
	set := func(atime, mtime time.Time) {
		ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
		e.must("utimes", unix.UtimesNano(e.p("f"), ts))
	}
	atime := func() unix.Timespec {
		var st unix.Stat_t
		e.must("stat", unix.Stat(e.p("f"), &st))
		return st.Atim
	}
	read := func() {
		b, err := os.ReadFile(e.p("f"))
		e.must("read", err)
		if !bytes.Equal(b, script) {
			e.t.Fatalf("read %q", b)
		}
	}
	run := func() {
		// Through a shell: exec'ing a file on a mount served by this
		// very process deadlocks Go's vfork-based exec (the parent
		// thread waits for the child's execve, which waits for the
		// FUSE server, which may wait for a GC stop-the-world that
		// waits for the parent thread).
		e.must("exec", exec.Command("/bin/sh", "-c", `exec "$0"`, e.p("f")).Run())
	}
	for _, step := range []struct {
		name         string
		atime, mtime time.Time
		prep, do     func()
		// cached: the step reads what the page cache may hold (no
		// drop_caches between prep and do).
		cached bool
	}{
		{"read, atime before mtime", now.Add(-2 * time.Hour), now.Add(-time.Hour), nil, read, false},
		{"read, atime after mtime", now.Add(-time.Minute), now.Add(-time.Hour), nil, read, false},
		{"read, atime older than a day", now.Add(-48 * time.Hour), now.Add(-72 * time.Hour), nil, read, false},
		{"exec, atime before mtime", now.Add(-2 * time.Hour), now.Add(-time.Hour), nil, run, false},
		{"exec, atime after mtime", now.Add(-time.Minute), now.Add(-time.Hour), nil, run, false},
		// utimes set the ctime to now: a first read brings the atime
		// past it (relatime updates an atime not after the ctime), so
		// that relatime has no reason left to update it on the second.
		{"second read", now.Add(-time.Minute), now.Add(-time.Hour), func() {
			read()
			time.Sleep(20 * time.Millisecond) // past the timestamp granularity
		}, read, false},
		// A write moves the mtime past the atime: relatime updates
		// the atime on the next read, also when the written data is
		// still in the page cache (issue 21; the writeback cache kept
		// it and the read never reached the frontend).
		{"read after a write", now.Add(-time.Minute), now.Add(-time.Hour), func() {
			time.Sleep(20 * time.Millisecond) // past the ctime set by utimes
			e.write("f", script, 0)
		}, read, true},
	} {
		set(step.atime, step.mtime)
		if step.prep != nil {
			dropCaches(e)
			step.prep()
		}
		before := atime()
		if !step.cached {
			dropCaches(e) // read from the file, not the page cache
		}
		step.do()
		e.rec("%s: atime changed %v", step.name, atime() != before)
	}
	e.lstat("f", "f")
}

// caseDirAtime: listing a directory changes its atime as the mount
// options say (nodiratime: never, files are not affected; -ko nodiratime
// is set on the mount after fusermount3, which refuses it).
func caseDirAtime(e *posixEnv) {
	e.must("mkdir", os.Mkdir(e.p("d"), 0o755))
	e.write("d/f", []byte("x"), 0)
	now := time.Now()
	for _, rel := range []string{"d", "d/f"} {
		// atime before mtime: relatime updates on the next access.
		ts := []unix.Timespec{unix.NsecToTimespec(now.Add(-2 * time.Hour).UnixNano()), unix.NsecToTimespec(now.Add(-time.Hour).UnixNano())}
		e.must("utimes", unix.UtimesNano(e.p(rel), ts))
	}
	atime := func(rel string) unix.Timespec {
		var st unix.Stat_t
		e.must("stat", unix.Stat(e.p(rel), &st))
		return st.Atim
	}
	dBefore, fBefore := atime("d"), atime("d/f")
	dropCaches(e)
	e.list("d", "d")
	b, err := os.ReadFile(e.p("d/f"))
	e.rec("read d/f: %q %s", b, errName(err))
	e.rec("dir atime changed %v, file atime changed %v", atime("d") != dBefore, atime("d/f") != fBefore)
}

// aclEntry is one entry of a POSIX ACL in the xattr encoding
// (system.posix_acl_access/default): tag, permissions, id.
type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// ACL tags of the xattr encoding.
const (
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
	aclNoID     = 0xffffffff
)

// aclXattr encodes entries (in the canonical order) as an ACL xattr value.
func aclXattr(ents ...aclEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2) // version
	for _, e := range ents {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// getACL records an ACL xattr of rel in a readable form.
func (e *posixEnv) getACL(label, rel, name string) {
	buf := make([]byte, 1024)
	n, err := unix.Lgetxattr(e.p(rel), name, buf)
	if err != nil {
		e.res(label, err)
		return
	}
	var sb strings.Builder
	for b := buf[4:n]; len(b) >= 8; b = b[8:] {
		fmt.Fprintf(&sb, "%x:%o:%d ", binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]), int32(binary.LittleEndian.Uint32(b[4:])))
	}
	e.rec("%s: %s", label, sb.String())
}

// caseACL: POSIX ACLs with -acl: default ACLs inherited by new entries
// (ignoring the umask), the mask, chmod and setfacl interplay, setgid
// clearing by setfacl.
func caseACL(e *posixEnv) {
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	const acc, def = "system.posix_acl_access", "system.posix_acl_default"
	e.must("mkdir", os.Mkdir(e.p("d"), 0o755))
	dflt := aclXattr(
		aclEntry{aclUserObj, 7, aclNoID}, aclEntry{aclUser, 5, 1000},
		aclEntry{aclGroupObj, 7, aclNoID}, aclEntry{aclGroup, 6, 2000},
		aclEntry{aclMask, 7, aclNoID}, aclEntry{aclOther, 1, aclNoID})
	e.res("set default ACL", unix.Lsetxattr(e.p("d"), def, dflt, 0))
	e.getACL("d default", "d", def)
	e.lstat("d", "d")
	// New entries inherit it; the umask does not apply.
	fd, err := unix.Open(e.p("d/f"), unix.O_CREAT|unix.O_WRONLY, 0o666)
	e.res("create d/f 0666", err)
	if err == nil {
		unix.Close(fd)
	}
	e.lstat("d/f", "d/f")
	e.getACL("d/f access", "d/f", acc)
	e.res("mkdir d/sub 0777", unix.Mkdir(e.p("d/sub"), 0o777))
	e.lstat("d/sub", "d/sub")
	e.getACL("d/sub access", "d/sub", acc)
	e.getACL("d/sub default", "d/sub", def)
	e.res("mknod d/p 0640", unix.Mkfifo(e.p("d/p"), 0o640))
	e.lstat("d/p", "d/p")
	e.getACL("d/p access", "d/p", acc)
	e.res("symlink d/l", unix.Symlink("x", e.p("d/l")))
	// O_TMPFILE inherits the default ACL as a created file does, also
	// once linked into place.
	fd, err = unix.Open(e.p("d"), unix.O_TMPFILE|unix.O_RDWR, 0o666)
	e.res("O_TMPFILE in d 0666", err)
	if err == nil {
		e.fstat("tmpfile", fd)
		e.res("linkat tmpfile", unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, e.p("d/tmp"), unix.AT_SYMLINK_FOLLOW))
		unix.Close(fd)
		e.lstat("d/tmp", "d/tmp")
		e.getACL("d/tmp access", "d/tmp", acc)
	}
	// Without a default ACL the umask applies and no ACL appears.
	fd, err = unix.Open(e.p("plain"), unix.O_CREAT|unix.O_WRONLY, 0o666)
	e.res("create plain 0666", err)
	if err == nil {
		unix.Close(fd)
	}
	e.lstat("plain", "plain")
	e.getACL("plain access", "plain", acc)
	// chmod changes the mask, not the named entries.
	e.res("chmod d/f 0640", unix.Chmod(e.p("d/f"), 0o640))
	e.lstat("d/f after chmod", "d/f")
	e.getACL("d/f access after chmod", "d/f", acc)
	// setfacl changes the mode bits.
	a := aclXattr(
		aclEntry{aclUserObj, 6, aclNoID}, aclEntry{aclUser, 7, 1000},
		aclEntry{aclGroupObj, 4, aclNoID}, aclEntry{aclMask, 5, aclNoID},
		aclEntry{aclOther, 0, aclNoID})
	e.res("setfacl plain", unix.Lsetxattr(e.p("plain"), acc, a, 0))
	e.lstat("plain after setfacl", "plain")
	e.getACL("plain access after setfacl", "plain", acc)
	// A minimal ACL is just the mode.
	minimal := aclXattr(aclEntry{aclUserObj, 7, aclNoID}, aclEntry{aclGroupObj, 5, aclNoID}, aclEntry{aclOther, 0, aclNoID})
	e.res("setfacl minimal", unix.Lsetxattr(e.p("plain"), acc, minimal, 0))
	e.lstat("plain after minimal", "plain")
	e.getACL("plain access after minimal", "plain", acc)
	e.res("remove default", unix.Lremovexattr(e.p("d"), def))
	e.getACL("d default after remove", "d", def)
	// setfacl by a caller outside the file's group and without
	// CAP_FSETID clears setgid.
	e.write("sg", []byte("x"), 0)
	e.must("chown", os.Lchown(e.p("sg"), -1, 4242))
	e.must("chmod", unix.Chmod(e.p("sg"), 0o2775))
	withoutFsetid(e.t, func() {
		e.res("setfacl sg", unix.Lsetxattr(e.p("sg"), acc, a, 0))
	})
	e.lstat("sg after setfacl", "sg")
	// Permission checks follow the ACL (root is exempt from most, so
	// check the listing of a directory with a default ACL instead).
	e.list("d", "d")
}

// TestSeekTrailingPartialHole pins the one SEEK_DATA/SEEK_HOLE difference
// the format imposes (README, "POSIX behaviour"): growing a file to a size
// that is not a multiple of 4096 writes its partial last block (an
// all-zero partial block is corruption, docs/format.md 4.4), so that block is
// data where ext4 has a hole.
func TestSeekTrailingPartialHole(t *testing.T) {
	tf := mountFS(t, testConfig{})
	for _, c := range []struct {
		dir     string
		data    int64
		dataErr error
		holeAt0 int64
		onMount bool
	}{
		{t.TempDir(), -1, unix.ENXIO, 0, false},
		{tf.mnt, 8192, nil, 0, true},
	} {
		fd, err := unix.Open(filepath.Join(c.dir, "f"), unix.O_RDWR|unix.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Ftruncate(fd, 10000); err != nil {
			t.Fatal(err)
		}
		d, err := unix.Seek(fd, 0, unix.SEEK_DATA)
		if err != c.dataErr || (err == nil && d != c.data) {
			t.Errorf("mount=%v: SEEK_DATA(0) = %d, %v; want %d, %v", c.onMount, d, err, c.data, c.dataErr)
		}
		if h, err := unix.Seek(fd, 0, unix.SEEK_HOLE); err != nil || h != c.holeAt0 {
			t.Errorf("mount=%v: SEEK_HOLE(0) = %d, %v; want %d", c.onMount, h, err, c.holeAt0)
		}
	}
}
