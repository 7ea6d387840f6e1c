package interop_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// data returns n pseudo-random bytes determined by seed, so that the same
// call writes the same bytes into the plain dir and into the mount.
func data(seed string, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8(sha256.Sum256([]byte(seed))).Read(b)
	return b
}

// ops applies file system operations below root and fails the test on
// any error. The workloads run the same ops on a plain directory and on a
// mount, which then must look the same.
type ops struct {
	t    *testing.T
	root string
}

func (o ops) p(name string) string { return filepath.Join(o.root, name) }

func (o ops) check(op, name string, err error) {
	o.t.Helper()
	if err != nil {
		o.t.Fatalf("%s %s in %s: %v", op, name, o.root, err)
	}
}

func (o ops) mkdir(name string, mode os.FileMode) {
	o.t.Helper()
	o.check("mkdir", name, os.Mkdir(o.p(name), 0o700))
	o.chmod(name, mode)
}

// write creates or replaces name with content and then sets mode
// (explicitly, so that the umask does not matter).
func (o ops) write(name string, content []byte, mode os.FileMode) {
	o.t.Helper()
	o.check("write", name, os.WriteFile(o.p(name), content, 0o600))
	o.chmod(name, mode)
}

// pwrite writes content at off without truncating.
func (o ops) pwrite(name string, off int64, content []byte) {
	o.t.Helper()
	f, err := os.OpenFile(o.p(name), os.O_WRONLY|os.O_CREATE, 0o644)
	o.check("open", name, err)
	_, err = f.WriteAt(content, off)
	o.check("pwrite", name, err)
	o.check("close", name, f.Close())
}

// appendTo writes content with O_APPEND.
func (o ops) appendTo(name string, content []byte) {
	o.t.Helper()
	f, err := os.OpenFile(o.p(name), os.O_WRONLY|os.O_APPEND, 0)
	o.check("open", name, err)
	_, err = f.Write(content)
	o.check("append", name, err)
	o.check("close", name, f.Close())
}

// fallocate allocates (mode 0 extends the file, with zeros).
func (o ops) fallocate(name string, mode uint32, off, length int64) {
	o.t.Helper()
	f, err := os.OpenFile(o.p(name), os.O_RDWR, 0)
	o.check("open", name, err)
	o.check("fallocate", name, unix.Fallocate(int(f.Fd()), mode, off, length))
	o.check("close", name, f.Close())
}

// chtimes sets atime and mtime to the given nanoseconds since the epoch,
// without following a symlink.
func (o ops) chtimes(name string, ns int64) {
	o.t.Helper()
	ts := []unix.Timespec{unix.NsecToTimespec(ns), unix.NsecToTimespec(ns)}
	o.check("utimensat", name, unix.UtimesNanoAt(unix.AT_FDCWD, o.p(name), ts, unix.AT_SYMLINK_NOFOLLOW))
}

func (o ops) truncate(name string, size int64) {
	o.t.Helper()
	o.check("truncate", name, os.Truncate(o.p(name), size))
}

func (o ops) chmod(name string, mode os.FileMode) {
	o.t.Helper()
	// unix.Chmod takes the raw bits, so setuid/setgid/sticky pass as such.
	o.check("chmod", name, unix.Chmod(o.p(name), uint32(mode)))
}

func (o ops) symlink(target, name string) {
	o.t.Helper()
	o.check("symlink", name, os.Symlink(target, o.p(name)))
}

func (o ops) link(old, name string) {
	o.t.Helper()
	o.check("link", name, os.Link(o.p(old), o.p(name)))
}

func (o ops) rename(old, name string) {
	o.t.Helper()
	o.check("rename", old, os.Rename(o.p(old), o.p(name)))
}

func (o ops) remove(name string) {
	o.t.Helper()
	o.check("remove", name, os.Remove(o.p(name)))
}

func (o ops) setxattr(name, attr string, value []byte) {
	o.t.Helper()
	o.check("setxattr "+attr, name, unix.Lsetxattr(o.p(name), attr, value, 0))
}

func (o ops) removexattr(name, attr string) {
	o.t.Helper()
	o.check("removexattr "+attr, name, unix.Lremovexattr(o.p(name), attr))
}

func (o ops) mkfifo(name string) {
	o.t.Helper()
	o.check("mkfifo", name, unix.Mkfifo(o.p(name), 0o640))
	o.chmod(name, 0o640)
}

// Names of exactly 255 bytes (the longest a name may be), one ASCII and
// one of two-byte UTF-8 characters, and names around the 175/176-byte
// limit above which the default configuration hashes encrypted names.
var (
	name255    = strings.Repeat("L", 250) + ".long"
	name255UTF = strings.Repeat("ä", 127) + "z"
	name175    = strings.Repeat("m", 175)
	name176    = strings.Repeat("n", 176)
	name100    = strings.Repeat("o", 100)
	// A symlink target of 2000 bytes: long, but its encryption still fits
	// the 4095 bytes the backing file system allows.
	longTarget = "/" + strings.Repeat("t/", 999) + "x"
)

// populate is the workload of the creating implementation: every kind of
// entry the format stores, with the sizes around block boundaries,
// sparse files, unaligned writes and long names.
func populate(o ops) {
	o.t.Helper()
	o.write("empty", nil, 0o644)
	o.write("one", []byte{'1'}, 0o600)
	for _, n := range []int{4095, 4096, 4097, 8192, 12289} {
		o.write(fmt.Sprintf("size%d", n), data(fmt.Sprint("size", n), n), 0o644)
	}
	o.write("multiblock", data("multiblock", 1<<20+12345), 0o640)
	o.write("exec", data("exec", 300), 0o755)
	o.write("readonly", data("readonly", 10), 0o444)
	o.write("setuid", data("setuid", 10), 0o4755)
	o.write("nothing", data("nothing", 5), 0o000)
	o.write("with space", []byte("space\n"), 0o644)
	o.write("-dash", []byte("dash\n"), 0o644)
	o.write(".hidden", []byte("hidden\n"), 0o644)
	o.write("ünïcödé ✓", []byte("unicode\n"), 0o644)
	// The same name in NFC and NFD: two files.
	o.write("caf\u00e9", []byte("nfc\n"), 0o644)
	o.write("cafe\u0301", []byte("nfd\n"), 0o644)
	o.write("line\nbreak\ttab\\back*?[x]", []byte("odd\n"), 0o644)
	o.write(" leading and trailing space ", []byte("spaces\n"), 0o644)

	// Unaligned writes at odd offsets, across block boundaries and past
	// the end (which leaves a hole).
	o.write("unaligned", data("unaligned", 10000), 0o644)
	o.pwrite("unaligned", 4093, data("u1", 7))
	o.pwrite("unaligned", 0, []byte{'X'})
	o.pwrite("unaligned", 8190, data("u2", 100))
	o.pwrite("unaligned", 20001, data("u3", 3))
	o.pwrite("unaligned", 9999, data("u4", 1))

	// Sparse files: only a hole, a hole at the start, holes between data.
	o.write("sparse-hole", nil, 0o644)
	o.truncate("sparse-hole", 200000)
	o.pwrite("sparse-start", 131072*2+7, data("ss", 33))
	o.write("sparse-mid", nil, 0o644)
	o.truncate("sparse-mid", 3<<20)
	o.pwrite("sparse-mid", 1<<20+5, data("sm1", 10))
	o.pwrite("sparse-mid", 3<<20-3, data("sm2", 3))
	o.pwrite("sparse-mid", 4<<20+4095, data("sm3", 2))
	// Truncate inside a block and grow again: the cut bytes read as zeros.
	o.write("shrunk", data("shrunk", 9000), 0o644)
	o.truncate("shrunk", 4099)
	o.truncate("shrunk", 6000)

	// Long names: files, a directory, a symlink, a hard link.
	o.write(name255, data("name255", 5000), 0o644)
	o.write(name255UTF, []byte("utf\n"), 0o644)
	o.write(name175, []byte("175\n"), 0o644)
	o.write(name176, []byte("176\n"), 0o644)
	o.write(name100, []byte("100\n"), 0o644)
	o.mkdir("d"+name255[1:], 0o755)
	o.write("d"+name255[1:]+"/"+name255, []byte("deep long\n"), 0o600)
	o.symlink("one", "s"+name255[1:])

	// Nested directories with their own modes.
	o.mkdir("a", 0o755)
	o.mkdir("a/b", 0o700)
	o.mkdir("a/b/c", 0o711)
	o.mkdir("a/b/c/d", 0o755)
	o.write("a/b/c/d/leaf", data("leaf", 4321), 0o644)
	o.mkdir("a/empty", 0o755)
	o.mkdir("sticky", 0o1777)
	o.mkdir("setgid", 0o2755)
	o.write("setgid/f", []byte("g\n"), 0o664)

	// Hard links: in one directory, across directories, to a long name.
	o.mkdir("hl", 0o755)
	o.write("hl/a", data("hla", 5000), 0o644)
	o.link("hl/a", "hl/b")
	o.link("hl/a", "a/b/hl-c")
	o.link(name255, "hl/long")

	// Symlinks: relative, absolute, dangling, long target, to a directory.
	o.symlink("../one", "a/rel")
	o.symlink("/etc/hostname", "abs")
	o.symlink("does/not/exist", "dangling")
	o.symlink(longTarget, "longtarget")
	o.symlink("a/b", "dirlink")

	// xattrs on files and directories: text, binary, empty, large.
	o.setxattr("one", "user.text", []byte("hello"))
	o.setxattr("one", "user.bin", data("xbin", 64))
	o.setxattr("one", "user.empty", nil)
	o.setxattr("size4096", "user.large", data("xlarge", 1000))
	o.setxattr("a", "user.dir", []byte("dir xattr"))
	o.setxattr("hl/a", "user.linked", []byte("on both names"))
	o.setxattr(name255, "user."+strings.Repeat("k", 100), []byte("long xattr name"))

	o.setxattr("caf\u00e9", "user.with space", []byte("v"))
	o.setxattr("caf\u00e9", "user.ü✓", []byte("unicode name"))

	o.mkfifo("fifo")
	o.rename("size8192", "a/moved8192")
	// Explicit timestamps with nanoseconds, last, since adding entries
	// changes a directory's.
	for i, p := range populateTimes {
		o.chtimes(p, 1234567890123456789+int64(i)*1000000000000001)
	}
}

// populateTimes and modifyTimes are the paths whose timestamps populate
// and modify set explicitly.
var (
	populateTimes = []string{"size4097", "a/b/c/d", "abs"}
	modifyTimes   = []string{"one", "longtarget2", "n" + name255[1:] + "/sub"}
)

// modify is the workload of the reading implementation: writes of every
// kind to what the creator made, which the creator then reads back.
func modify(o ops) {
	o.t.Helper()
	o.pwrite("multiblock", 1<<20+12345+999, data("append", 3333))
	o.pwrite("size4097", 4090, data("overwrite", 20))
	o.pwrite("unaligned", 3, data("u5", 4096))
	o.write("by-other", data("by-other", 12345), 0o640)
	o.appendTo("by-other", data("appended", 5001))
	o.fallocate("by-other", 0, 30000, 3)
	o.fallocate("size4095", unix.FALLOC_FL_KEEP_SIZE, 0, 9000)
	o.pwrite("empty", 4096*3+1, []byte("into the empty file"))
	o.write("by-other-empty", nil, 0o600)
	o.truncate("size4096", 1000)
	o.truncate("one", 70000)
	o.pwrite("sparse-hole", 100001, []byte("in the hole"))
	o.pwrite("hl/b", 4999, data("through b", 10))
	o.link("hl/b", "hl/d")
	o.remove("hl/a")
	o.write(name255, data("name255 rewritten", 7000), 0o600)
	o.rename(name176, "a/b/"+name176)
	o.rename("a/b/c", "a/"+name255)
	o.symlink(longTarget[:1500], "longtarget2")
	o.remove("dangling")
	o.setxattr("by-other", "user.new", []byte("new"))
	o.setxattr("one", "user.text", []byte("replaced"))
	o.removexattr("one", "user.empty")
	o.setxattr("a", "user.dir2", data("dir2", 100))
	o.chmod("exec", 0o700)
	o.chmod("a/b", 0o755)
	o.mkdir("n"+name255[1:], 0o750)
	o.mkdir("n"+name255[1:]+"/sub", 0o755)
	o.write("n"+name255[1:]+"/sub/f", data("nested new", 4097), 0o644)
	o.remove("a/empty")
	o.remove("fifo")
	o.mkfifo("fifo2")
	for i, p := range modifyTimes {
		o.chtimes(p, 1111111111222222222+int64(i)*1000000000000001)
	}
}

// entry is what the comparison looks at for one directory entry.
type entry struct {
	mode     uint32 // type and permission bits, as st_mode
	uid, gid uint32
	size     int64
	nlink    uint64
	mtime    unix.Timespec
	sum      [32]byte // SHA-256 of a regular file's content
	target   string   // a symlink's target
	xattrs   string   // sorted user.* xattrs with their values, or the error
	links    string   // the first path (sorted) with the same inode
}

// manifest maps the path below the root (with "/" separators) to its
// entry.
type manifest map[string]entry

// scan reads the whole tree below root. Only user.* xattrs count; the
// plain directory may have security.* ones the mount does not show.
func scan(t *testing.T, root string, skip ...string) manifest {
	t.Helper()
	m := manifest{}
	inodes := map[uint64][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if slices.Contains(skip, rel) {
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		e := entry{mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, nlink: uint64(st.Nlink), mtime: st.Mtim}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.sum = sha256.Sum256(b)
			inodes[st.Ino] = append(inodes[st.Ino], rel)
		case unix.S_IFLNK:
			if e.target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFDIR {
			e.xattrs = userXattrs(p)
		}
		m[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", root, err)
	}
	for _, paths := range inodes {
		slices.Sort(paths)
		for _, p := range paths {
			e := m[p]
			e.links = paths[0]
			m[p] = e
		}
	}
	return m
}

// userXattrs lists the user.* xattrs of p with their values, sorted, or
// the error of listing them.
func userXattrs(p string) string {
	buf := make([]byte, 64*1024)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for x := range strings.SplitSeq(string(buf[:n]), "\x00") {
		if !strings.HasPrefix(x, "user.") {
			continue
		}
		v := make([]byte, 64*1024)
		m, err := unix.Lgetxattr(p, x, v)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", x, err))
			continue
		}
		out = append(out, fmt.Sprintf("%s=%x", x, v[:m]))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// compareOpts says which fields besides type, mode, owner, content,
// symlink target, xattrs and hard-link sharing are compared.
type compareOpts struct {
	// mtime: between two views of the same ciphertext the timestamps
	// must agree; a plain dir written separately has its own.
	mtime bool
	// mtimeOf, if set, compares the mtime of these paths even without
	// mtime.
	mtimeOf []string
	// mtimeShift, if set, gives the seconds by which got's mtime of a
	// path is ahead of want's.
	mtimeShift func(path string) int64
	// dirSize: the size of a directory is the backing directory's, which
	// a plain dir written separately does not share.
	dirSize bool
	// nlink: the link counts of files and directories.
	nlink bool
	// xattrs: false where one side cannot have them.
	xattrs bool
	// ignoreLinks skips the hard-link groups.
	ignoreLinks bool
}

// compare fails the test with every difference between want and got
// (described as wantName and gotName) and returns the number of field
// comparisons made.
func compare(t *testing.T, wantName string, want manifest, gotName string, got manifest, o compareOpts) int {
	t.Helper()
	var diffs []string
	checks := 0
	diff := func(p, field string, w, g any) {
		checks++
		if w != g {
			diffs = append(diffs, fmt.Sprintf("%s %s: %s has %s, %s has %s", short(p), field, wantName, clip(w), gotName, clip(g)))
		}
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range want {
			if !yield(p) {
				return
			}
		}
	}) {
		w := want[p]
		g, ok := got[p]
		checks++
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: in %s, missing in %s", short(p), wantName, gotName))
			continue
		}
		diff(p, "mode", fmt.Sprintf("%o", w.mode), fmt.Sprintf("%o", g.mode))
		diff(p, "owner", fmt.Sprint(w.uid, w.gid), fmt.Sprint(g.uid, g.gid))
		isDir := w.mode&unix.S_IFMT == unix.S_IFDIR
		if !isDir || o.dirSize {
			diff(p, "size", w.size, g.size)
		}
		if o.nlink {
			diff(p, "nlink", w.nlink, g.nlink)
		}
		if o.mtime || slices.Contains(o.mtimeOf, p) {
			wt := w.mtime
			if o.mtimeShift != nil {
				wt.Sec += o.mtimeShift(p)
			}
			diff(p, "mtime", fmt.Sprint(wt), fmt.Sprint(g.mtime))
		}
		diff(p, "content", fmt.Sprintf("%x", w.sum), fmt.Sprintf("%x", g.sum))
		diff(p, "symlink target", w.target, g.target)
		if o.xattrs {
			diff(p, "xattrs", w.xattrs, g.xattrs)
		}
		if !o.ignoreLinks {
			diff(p, "hard-link group", w.links, g.links)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			checks++
			diffs = append(diffs, fmt.Sprintf("%s: in %s, not in %s", short(p), gotName, wantName))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("%s and %s differ in %d of %d checks:\n%s", wantName, gotName, len(diffs), checks, strings.Join(diffs, "\n"))
	}
	return checks
}

// short quotes path p for a message, with components longer than 40
// bytes cut to their start and length, so that a diff of long names
// stays readable.
func short(p string) string {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if len(c) > 40 {
			parts[i] = fmt.Sprintf("%s…(%d bytes)", strings.ToValidUTF8(c[:16], ""), len(c))
		}
	}
	return fmt.Sprintf("%q", strings.Join(parts, "/"))
}

// clip formats v for a message, cut to 120 bytes.
func clip(v any) string {
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if len(s) > 120 {
		return s[:120] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}
