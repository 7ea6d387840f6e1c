package fusefrontend

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// A full CIPHERDIR under the kernel's writeback cache (docs/cli.md, "A
// full CIPHERDIR").
//
// With the writeback cache write(2) copies data into the kernel's page
// cache and returns; the kernel sends it as WRITE requests later. When
// such a write-back fails (the backing filesystem is full), the kernel
// records the error on the file (fuse_writepage_end: mapping_set_error),
// which the next fsync(2) of every descriptor (errseq) and the next
// close(2) of the file (fuse_flush: filemap_check_errors, also with FLUSH
// refused, since it writes the inode back before it looks at no_flush)
// report once. But it leaves the pages clean in the cache, reading back as
// if stored, and write(2) goes on succeeding: nothing else ever asks the
// filesystem. So the frontend:
//
//   - watches the free space of CIPHERDIR (statfs, at most once per
//     statfsInterval or after half the free space above the headroom was
//     written, never per WRITE) and, below lowSpaceHeadroom(), switches
//     to low-space mode;
//   - in low-space mode, makes every write(2) on a file open for writing
//     write the file's earlier data back first: the kernel asks for the
//     attributes (GETATTR with the handle) before each write(2) whose
//     attributes are not valid; the frontend then writes the file's dirty
//     pages back and drops them (NotifyContent, which also leaves the
//     attributes invalid for the next write(2)) and fails the write(2)
//     with the error if a write-back of the file failed since the
//     handle last reported one. So at most the data of one write(2) call
//     per descriptor is accepted but not stored, and the next write(2)
//     on that descriptor fails (ENOSPC);
//   - on a failed write-back, at once: drops the file's cached pages (a
//     read returns what the backing file holds: zeros where the lost
//     data was), extends the backing file to the end of the lost range
//     (so that it has the size the kernel shows, before and after a
//     remount), records the loss for the write(2) check above and
//     enters low-space mode.
//
// The bound: while the free space is above the headroom, the kernel holds
// at most its dirty limit for the mount (bdi max_bytes: 1% of the dirty
// memory, strictlimit), which the headroom exceeds, so nothing is lost
// unless another program takes more than the headroom's worth of space
// within one statfsInterval; then at most the kernel's dirty data for the
// mount is lost (and reported), and each writer's next write(2) fails.
// Data written through a shared mmap is written back on the kernel's
// schedule and reported by fsync/msync only.
const (
	// lowSpaceMin is the least headroom.
	lowSpaceMin = 64 << 20
	// statfsInterval is the longest time between two looks at the free
	// space while writes come in.
	statfsInterval = 100 * time.Millisecond
	// lowSpaceBudget is the number of bytes written between two looks in
	// low-space mode.
	lowSpaceBudget = 1 << 20
)

// lowSpaceHeadroom is the free space below which low-space mode applies:
// twice the kernel's largest dirty page cache for one FUSE mount (1% of
// its global dirty limit: vm.dirty_bytes, or vm.dirty_ratio percent of
// the memory), at least lowSpaceMin.
func lowSpaceHeadroom() int64 {
	limit := readProcInt("/proc/sys/vm/dirty_bytes")
	if limit <= 0 {
		ratio := readProcInt("/proc/sys/vm/dirty_ratio")
		if ratio <= 0 {
			ratio = 20
		}
		limit = totalRAM() / 100 * ratio
	}
	return max(lowSpaceMin, 2*limit/100)
}

func readProcInt(p string) int64 {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// spaceGuard tracks whether CIPHERDIR is close to full. Safe for
// concurrent use; the hot path (wrote) is two atomic operations and a
// clock read.
type spaceGuard struct {
	fd       int
	headroom int64
	start    time.Time
	low      atomic.Bool
	// budget is what may still be written before the next statfs;
	// deadline (nanoseconds since start) is when it is due anyway.
	budget   atomic.Int64
	deadline atomic.Int64
	mu       sync.Mutex // one statfs at a time
	// onLow runs (in a goroutine of its own) when low-space mode begins.
	onLow func()
}

func newSpaceGuard(fd int, onLow func()) *spaceGuard {
	return &spaceGuard{fd: fd, headroom: lowSpaceHeadroom(), start: time.Now(), onLow: onLow}
}

// wrote accounts for n bytes written to CIPHERDIR.
func (g *spaceGuard) wrote(n int) {
	if g.budget.Add(-int64(n)) > 0 && int64(time.Since(g.start)) < g.deadline.Load() {
		return
	}
	g.refresh()
}

// isLow reports whether low-space mode applies, looking at the free space
// again if the last look is older than statfsInterval.
func (g *spaceGuard) isLow() bool {
	if int64(time.Since(g.start)) >= g.deadline.Load() {
		g.refresh()
	}
	return g.low.Load()
}

// forceLow enters low-space mode (a write-back failed) until the next
// look finds enough space.
func (g *spaceGuard) forceLow() {
	g.budget.Store(lowSpaceBudget)
	g.deadline.Store(int64(time.Since(g.start) + statfsInterval))
	g.setLow(true)
}

func (g *spaceGuard) setLow(low bool) {
	if low && !g.low.Swap(true) {
		go g.onLow()
	} else if !low {
		g.low.Store(false)
	}
}

func (g *spaceGuard) refresh() {
	if !g.mu.TryLock() {
		return // another request is looking
	}
	defer g.mu.Unlock()
	var st unix.Statfs_t
	err := syscallcompat.Retry(func() error { return unix.Fstatfs(g.fd, &st) })
	g.deadline.Store(int64(time.Since(g.start) + statfsInterval))
	if err != nil {
		g.budget.Store(lowSpaceBudget)
		return
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < g.headroom {
		g.budget.Store(lowSpaceBudget)
		g.setLow(true)
		return
	}
	// Half the room above the headroom: ciphertext is larger than the
	// plaintext counted here, and others may write too.
	g.budget.Store(max((free-g.headroom)/2, lowSpaceBudget))
	g.setLow(false)
}

// writers is the set of nodes with handles open for writing (low-space
// mode must reach their page cache).
type writers struct {
	mu sync.Mutex
	m  map[*Node]int
}

func (w *writers) add(n *Node) {
	w.mu.Lock()
	if w.m == nil {
		w.m = make(map[*Node]int)
	}
	w.m[n]++
	w.mu.Unlock()
}

func (w *writers) remove(n *Node) {
	w.mu.Lock()
	if w.m[n]--; w.m[n] <= 0 {
		delete(w.m, n)
	}
	w.mu.Unlock()
}

func (w *writers) list() []*Node {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*Node, 0, len(w.m))
	for n := range w.m {
		out = append(out, n)
	}
	return out
}

// enterLowSpace writes back and drops the page cache of every file open
// for writing, which also makes the next write(2) on each ask for the
// attributes (see flushBeforeWrite).
func (rn *RootNode) enterLowSpace() {
	rn.log.Debug("CIPHERDIR is almost full: page-cache writes are checked one by one")
	for _, n := range rn.writers.list() {
		n.dropCache()
	}
}

// trackWriter registers a handle of n opened for writing under the
// writeback cache (its loss reports start with losses after now) and
// returns the open flags to add: in low-space mode, a new file (created)
// is opened write-through (FOPEN_DIRECT_IO), since the attributes of the
// CREATE reply would let its first write(2)s skip the check and no
// notification can reach an inode before the kernel has it.
func (n *Node) trackWriter(f *file, created bool) uint32 {
	if !n.rn.args.Writeback || f.readOnly {
		return 0
	}
	f.writer = n
	f.lostSeen.Store(n.state().lost.Load())
	n.rn.writers.add(n)
	if !n.rn.space.isLow() {
		return 0
	}
	if created {
		f.direct = true
		return fuse.FOPEN_DIRECT_IO
	}
	// Attributes the kernel got before (LOOKUP) would let the first
	// write(2) skip the check. (Attributes only: nothing to wait for.)
	n.NotifyContent(-1, 0)
	return 0
}

// untrackWriter undoes trackWriter when f is released.
func (rn *RootNode) untrackWriter(f *file) {
	if f.writer != nil {
		rn.writers.remove(f.writer)
	}
}

// dropCache writes n's dirty pages back and drops its page cache and
// attributes from the kernel; the write-backs it causes arrive as WRITE
// requests, which other goroutines serve, so it must not run in a request
// that holds what those need.
func (n *Node) dropCache() {
	n.NotifyContent(0, 0)
}

// flushBeforeWrite runs for a GETATTR with handle f in low-space mode,
// which the kernel sends before a write(2) (and before a read or seek
// past its idea of the end of file) when its attributes are not valid. It
// writes the file's earlier data back (see the top of this file) and
// returns the error of a write-back that failed since f last reported
// one.
func (n *Node) flushBeforeWrite(f *file) syscall.Errno {
	n.dropCache()
	st := n.state()
	if seq := st.lost.Load(); seq != f.lostSeen.Load() {
		f.lostSeen.Store(seq)
		if e := syscall.Errno(st.lostErr.Load()); e != 0 {
			return e
		}
		return syscall.EIO
	}
	return 0
}

// lostWrite handles a failed page-cache write-back of len bytes at off
// through f (see the top of this file).
func (n *Node) lostWrite(ctx context.Context, f *file, off int64, length int, err error) {
	st := n.state()
	errno := syscall.EIO
	var e syscall.Errno
	if errors.As(err, &e) {
		errno = e
	}
	st.lostErr.Store(int32(errno))
	st.lost.Add(1)
	n.rn.space.forceLow()
	end := uint64(off) + uint64(length)
	if size, err := f.cf.Size(ctx); err == nil && size < end {
		// The kernel keeps its own size under the writeback cache:
		// the file must have it also after a remount.
		if err := f.cf.Truncate(ctx, end); err != nil {
			n.rn.log.Warn("could not extend a file to the size the kernel shows after a failed write-back", "ino", f.cf.Ino(), "size", end, "err", err)
		}
	}
	n.rn.log.Warn("write-back to CIPHERDIR failed: data lost, reported to write, fsync and close", "ino", f.cf.Ino(), "off", off, "len", length, "err", err)
	// The pages the kernel could not write are clean now and would read
	// back as if stored. Dropping them waits for the end of this
	// write-back, so not here.
	if st.dropping.CompareAndSwap(false, true) {
		go func() {
			st.dropping.Store(false)
			n.dropCache()
		}()
	}
}
