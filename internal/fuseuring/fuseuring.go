// Package fuseuring serves a FUSE connection over io_uring, the transport
// Linux 6.14 added beside reading and writing /dev/fuse (the kernel's
// Documentation/filesystems/fuse/fuse-io-uring.rst).
//
// The kernel keeps one queue per possible CPU and puts a request on the
// queue of the CPU its caller runs on. The daemon lends it ring entries:
// a header buffer and a payload buffer each, registered with an
// IORING_OP_URING_CMD (FUSE_IO_URING_CMD_REGISTER) on the /dev/fuse
// descriptor. When a request arrives, the kernel copies it into a free
// entry of its queue and completes that command; the daemon answers in
// the same buffers and hands the entry back with COMMIT_AND_FETCH, one
// system call that sends the reply and waits for the next request. Only
// INIT (before the rings exist), FORGET, INTERRUPT and notifications still
// travel through /dev/fuse; the caller serves those.
//
// Each entry is served by a goroutine of its own on a locked OS thread,
// pinned to the queue's CPU, which owns a one-slot io_uring (single issuer,
// deferred task work): the request is copied into the entry's buffers on
// that thread when it waits, the caller's CPU serves it, and the reply is
// sent and the next request fetched in one io_uring_enter. (Unpinned
// threads with the kernel's default task work left an untar at 0.97x of
// the /dev/fuse time; pinned, 0.71x.) An entry that serves streaming data
// (a READ or WRITE that fills its payload buffer) lets go of its CPU until
// it serves a smaller request (run).
// Requests of one queue are served concurrently, one per entry. A queue
// that has handed out its last free entry registers another one, up to
// Config.MaxEntries, so that requests that wait long (a lock held by
// another process) do not starve the others; the kernel never takes an
// entry back, so a queue keeps the entries it grew to until unmount.
//
// Memory: each entry maps one page for the header and a payload buffer of
// the negotiated max_write (1 MiB with gocryptfs). The payload is
// anonymous memory that becomes resident only where a request touches it:
// an idle mount holds one page per entry. A queue starts with
// Config.Entries entries on CPUs this process may run on and one on the
// others (possible but offline or excluded CPUs still need a queue for the
// kernel to switch to the ring).
//
// Handler (go-fuse's ProtocolServer.HandleRequest) decodes the request and
// writes the reply; it reads WRITE data straight from the payload buffer
// and lets READ decrypt straight into it, so file data is copied only by
// the kernel, once each way.
//go:build linux

package fuseuring

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Kernel ABI of FUSE over io_uring (include/uapi/linux/fuse.h).
const (
	cmdRegister       = 1 // FUSE_IO_URING_CMD_REGISTER
	cmdCommitAndFetch = 2 // FUSE_IO_URING_CMD_COMMIT_AND_FETCH

	// struct fuse_uring_req_header: in_out[128], op_in[128],
	// struct fuse_uring_ent_in_out.
	hdrInOut    = 0
	hdrOpIn     = 128
	hdrOpInSize = 128
	hdrEntInOut = 256
	hdrSize     = 288

	inHeaderSize = 40 // struct fuse_in_header

	// kickDelay is how long a grown entry waits before it decides that
	// its queue is stuck (kick).
	kickDelay = 20 * time.Millisecond

	opRead  = 15 // FUSE_READ; its fuse_read_in has the size at offset 16
	opWrite = 16 // FUSE_WRITE

	// minPayload is FUSE_MIN_READ_BUFFER.
	minPayload = 8192
)

// entInOut is struct fuse_uring_ent_in_out.
type entInOut struct {
	flags     uint64
	commitID  uint64
	payloadSz uint32
	padding   uint32
	reserved  uint64
}

// Ring is a FUSE connection served over io_uring. Its methods are safe for
// concurrent use.
type Ring struct {
	fd      int
	handle  Handler
	cfg     Config
	payload int
	log     *slog.Logger
	queues  []*queue
	wg      sync.WaitGroup
	served  atomic.Uint64
	entries atomic.Int64
	// usable is the CPUs this process may run on.
	usable unix.CPUSet
}

type queue struct {
	r     *Ring
	qid   uint16
	idle  atomic.Int32 // entries waiting in the kernel for a request
	total atomic.Int32 // entries registered
	// answered counts the requests its entries answered: each answer
	// also fetches the oldest request waiting in the kernel (kick).
	answered atomic.Uint64
	// usable: this process may run on the queue's CPU.
	usable bool
}

// Probe reports whether this kernel offers FUSE over io_uring to this
// process, and why or why not, in a form fit for the start-up line (e.g.
// "io_uring off: /sys/module/fuse/parameters/enable_uring is N").
func Probe() (ok bool, reason string) {
	b, err := os.ReadFile(ParamPath)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "io_uring off: this kernel has no FUSE over io_uring (no " + ParamPath + ")"
	}
	if err != nil {
		return false, "io_uring off: " + err.Error()
	}
	if v := strings.TrimSpace(string(b)); v != "Y" {
		return false, "io_uring off: " + ParamPath + " is " + v
	}
	rg, err := newRing(1)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			return false, "io_uring off: " + err.Error() + " (sysctl kernel.io_uring_disabled?)"
		}
		return false, "io_uring off: " + err.Error()
	}
	rg.close()
	return true, "io_uring on: " + ParamPath + " is Y"
}

// Start registers the entries of every queue on the /dev/fuse descriptor
// fuseFD, whose INIT negotiated CAP_OVER_IO_URING, and serves them with h
// until the connection ends. It returns once every queue has its first
// entry registered; the kernel switches to the rings when the last one
// is. On an error, the caller must call Poison so that the kernel falls
// back to /dev/fuse instead of waiting for a ring that will not come.
func Start(fuseFD int, h Handler, cfg Config) (*Ring, error) {
	if cfg.Entries <= 0 {
		cfg.Entries = 2
	}
	if cfg.MaxEntries < cfg.Entries {
		cfg.MaxEntries = max(256, cfg.Entries)
	}
	pg := os.Getpagesize()
	payload := (max(cfg.MaxWrite, minPayload) + pg - 1) / pg * pg
	r := &Ring{fd: fuseFD, handle: h, cfg: cfg, payload: payload, log: cfg.Log}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	n, err := possibleCPUs()
	if err != nil {
		return nil, err
	}
	usable := &r.usable
	if err := unix.SchedGetaffinity(0, usable); err != nil {
		usable.Zero()
	}
	var first []chan error
	for qid := range n {
		q := &queue{r: r, qid: uint16(qid), usable: usable.IsSet(qid)}
		r.queues = append(r.queues, q)
		count := 1
		if usable.Count() == 0 || q.usable {
			count = cfg.Entries
		}
		for range count {
			c := make(chan error, 1)
			first = append(first, c)
			q.total.Add(1)
			q.spawn(c)
		}
	}
	var errs []error
	for _, c := range first {
		if err := <-c; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return r, errors.Join(errs...)
	}
	return r, nil
}

// Poison makes the kernel give up on io_uring for the connection on
// fuseFD and serve it through /dev/fuse: a registration the kernel
// refuses turns the connection's io_uring mode off. Used when Start
// failed part-way.
func Poison(fuseFD int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rg, err := newRing(1)
	if err != nil {
		return err
	}
	defer rg.close()
	sqe := rg.nextSQE()
	prepCmd(sqe, fuseFD, cmdRegister, 0, ^uint16(0), nil) // no such queue: EINVAL
	if err := rg.enter(false); err != nil {
		return err
	}
	return nil
}

// Wait returns when every entry has stopped (the connection ended).
func (r *Ring) Wait() { r.wg.Wait() }

// Served is the number of requests served through the rings.
func (r *Ring) Served() uint64 { return r.served.Load() }

// Entries is the number of entries registered, over all queues.
func (r *Ring) Entries() int { return int(r.entries.Load()) }

// Queues is the number of queues (the kernel's possible CPUs).
func (r *Ring) Queues() int { return len(r.queues) }

// PayloadSize is the size of each entry's payload buffer.
func (r *Ring) PayloadSize() int { return r.payload }

// possibleCPUs is the kernel's num_possible_cpus(): the number of queues
// it expects.
func possibleCPUs() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return runtime.NumCPU(), nil
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(part, "-")
		if !ok {
			hi = lo
		}
		h, err := strconv.Atoi(hi)
		if err != nil {
			return 0, fmt.Errorf("parsing /sys/devices/system/cpu/possible %q: %w", b, err)
		}
		n = max(n, h+1)
	}
	return n, nil
}

// spawn starts one more entry; first, if not nil, receives the result of
// its registration.
// The caller has counted it in q.total.
func (q *queue) spawn(first chan<- error) {
	q.r.wg.Add(1)
	go q.run(first)
}

// grow adds an entry when the last free one was just taken. Entries of a
// queue take requests concurrently, so two may call grow at once with
// one entry left below the limit: the count is claimed with a
// compare-and-swap, so that only one of them spawns.
//
// Only a goroutine counted in r.wg (an entry's) may call it: the owner
// closes the connection's descriptor once Wait returns, and the next
// mount may get the same number. An entry registered on it after that
// would serve the other mount's requests with this mount's handler (an
// experiment that grew from an uncounted timer goroutine did so, and
// go-fuse saw node IDs and file handles it had never given out).
func (q *queue) grow() {
	for {
		n := q.total.Load()
		if int(n) >= q.r.cfg.MaxEntries {
			return
		}
		if q.total.CompareAndSwap(n, n+1) {
			q.spawn(nil)
			return
		}
	}
}

// run is the life of one entry. The goroutine keeps its OS thread locked
// and never unlocks it: the ring belongs to this thread, which ends with
// the goroutine.
func (q *queue) run(first chan<- error) {
	defer q.r.wg.Done()
	runtime.LockOSThread()
	var pin unix.CPUSet
	pin.Set(int(q.qid))
	pinned := false
	if q.usable {
		// The kernel puts a request on the queue of its caller's CPU;
		// an entry thread on that CPU is woken there, without moving
		// the work to another CPU (the main gain of the ring).
		pinned = unix.SchedSetaffinity(0, &pin) == nil
	}
	report := func(err error) {
		if first != nil {
			first <- err
			first = nil
		} else if err != nil {
			q.r.log.Warn("io_uring entry stopped", "queue", q.qid, "err", err)
		}
	}
	pg := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, pg+q.r.payload, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		report(fmt.Errorf("queue %d: mapping buffers: %w", q.qid, err))
		return
	}
	defer unix.Munmap(mem)
	rg, err := newRing(2)
	if err != nil {
		report(fmt.Errorf("queue %d: %w", q.qid, err))
		return
	}
	defer rg.close()
	hdr := mem[:hdrSize:hdrSize]
	payload := mem[pg:]
	iov := (*[2]unix.Iovec)(unsafe.Pointer(&mem[512]))
	iov[0].Base, iov[0].Len = &mem[0], hdrSize
	iov[1].Base, iov[1].Len = &payload[0], uint64(len(payload))

	prepCmd(rg.nextSQE(), q.r.fd, cmdRegister, 0, q.qid, iov)
	q.idle.Add(1)
	if err := rg.enter(false); err != nil {
		q.idle.Add(-1)
		report(fmt.Errorf("queue %d: register: %w", q.qid, err))
		return
	}
	// A refused registration completes at once. A completion with
	// res 0 is a request that came in already: it stays for the loop.
	if res, ok := rg.peek(); ok && res < 0 {
		q.idle.Add(-1)
		report(fmt.Errorf("queue %d: register: %w", q.qid, syscall.Errno(-res)))
		return
	}
	q.r.entries.Add(1)
	// inUse is set once a grown entry answered a request (kick).
	var inUse atomic.Bool
	vecs := new(reqVecs)
	if first == nil {
		// A grown entry: requests that found no free entry while it
		// was being registered wait in the kernel's queue.
		go q.kick(&inUse)
	}
	report(nil)
	for {
		if err := rg.enter(true); err != nil {
			q.idle.Add(-1)
			report(err)
			return
		}
		res, ok := rg.reap()
		if !ok {
			continue
		}
		if res < 0 {
			// ENOTCONN, ECONNABORTED: the connection ended (the
			// kernel's teardown). Anything else is a command the
			// kernel refused, a commit for instance, and this entry
			// leaves its queue for good: say so.
			q.idle.Add(-1)
			if e := syscall.Errno(-res); e != unix.ENOTCONN && e != unix.ECONNABORTED && e != unix.ECANCELED && e != unix.ENODEV {
				report(e)
			}
			return
		}
		if q.idle.Add(-1) == 0 {
			q.grow()
		}
		commitID, large := q.serve(hdr, payload, vecs)
		q.answered.Add(1)
		if first == nil && !inUse.Load() {
			inUse.Store(true)
		}
		// A READ or WRITE that fills the payload buffer is streaming
		// data: the thread that serves it also copies a megabyte in
		// and out in the kernel, and decrypts or encrypts it. Kept on
		// the caller's CPU, which runs the reader or writer (or the
		// kernel's writeback) too, the second CPU idled: streaming
		// writes ran at 0.7-0.8x of /dev/fuse. Such an entry may run
		// anywhere until it serves a smaller request, which pins it
		// again (one sched_setaffinity per change, none per request).
		if large && pinned {
			pinned = unix.SchedSetaffinity(0, &q.r.usable) != nil
		} else if !large && !pinned && q.usable {
			pinned = unix.SchedSetaffinity(0, &pin) == nil
		}
		prepCmd(rg.nextSQE(), q.r.fd, cmdCommitAndFetch, commitID, q.qid, nil)
		q.idle.Add(1)
	}
}

// kick sends one cheap request (STATFS) from the queue's CPU. The kernel
// hands a request that finds no free entry to the next entry that
// commits, but a newly registered entry takes only requests that arrive
// after it: if every other entry of the queue waits long (a forwarded
// lock), a request queued before it would wait with them, although an
// entry is free. The kick lands on a free entry, and its commit fetches
// the oldest queued request. One kick per grown entry pulls as many
// requests as entries were added.
//
// Only where it is needed: a STATFS on the mount point holds the mount
// while it is served, so an umount(8) that comes at that moment fails
// with "target is busy". A request can only be stuck while some entry of
// the queue is busy (when all are free, each fetched what was queued
// when it last answered) and no entry answers (each answer fetches the
// oldest queued request). So every kickDelay the new entry looks: it
// kicks when an entry is busy and none answered in that time; it stops
// looking once it answered a request itself (it is in rotation) or every
// entry is free. A queue that grew in a burst settles within
// milliseconds without a kick.
func (q *queue) kick(inUse *atomic.Bool) {
	if q.r.cfg.MountPoint == "" || !q.usable {
		return
	}
	for {
		before := q.answered.Load()
		time.Sleep(kickDelay)
		if inUse.Load() || q.idle.Load() >= q.total.Load() {
			return
		}
		if q.answered.Load() == before {
			break
		}
	}
	runtime.LockOSThread() // the thread ends with the goroutine
	var set unix.CPUSet
	set.Set(int(q.qid))
	if unix.SchedSetaffinity(0, &set) != nil {
		return
	}
	var st unix.Statfs_t
	_ = unix.Statfs(q.r.cfg.MountPoint, &st)
}

// reqVecs holds the slices that hand a request and its reply buffers to
// the handler. The handler is a function value, so whatever is passed to
// it escapes: one per entry, reused, instead of two allocations per
// request.
type reqVecs struct {
	in  [3][]byte
	out [2][]byte
}

// serve answers the request in the entry's buffers and returns its
// commit ID. vecs is the entry's own.
func (q *queue) serve(hdr, payload []byte, vecs *reqVecs) (commitID uint64, large bool) {
	eio := (*entInOut)(unsafe.Pointer(&hdr[hdrEntInOut]))
	ih := (*fuse.InHeader)(unsafe.Pointer(&hdr[hdrInOut]))
	commitID, unique := eio.commitID, ih.Unique
	psz := min(int(eio.payloadSz), len(payload))
	opLen := min(max(int(ih.Length)-inHeaderSize-psz, 0), hdrOpInSize)
	vecs.in = [3][]byte{hdr[:inHeaderSize], hdr[hdrOpIn : hdrOpIn+opLen], payload[:psz]}
	vecs.out = [2][]byte{hdr[:outHeaderSize], payload}
	switch ih.Opcode {
	case opWrite:
		large = psz >= q.r.payload
	case opRead:
		large = opLen >= 20 && int(*(*uint32)(unsafe.Pointer(&hdr[hdrOpIn+16]))) >= q.r.payload
	}
	n, st := q.call(vecs.in[:], vecs.out[:])
	n = ErrorReply(hdr[hdrInOut:], n, st, unique)
	eio.payloadSz = uint32(n - outHeaderSize)
	q.r.served.Add(1)
	return commitID, large
}

// call runs the handler; a panic in it fails the request, not the mount.
func (q *queue) call(in, out [][]byte) (n int, st fuse.Status) {
	defer func() {
		if p := recover(); p != nil {
			q.r.log.Error("panic serving a FUSE request over io_uring", "panic", p)
			n, st = 0, fuse.EIO
		}
	}()
	return q.r.handle(in, out)
}

// prepCmd fills sqe with a FUSE io_uring command (struct fuse_uring_cmd_req
// in the SQE's command area).
func prepCmd(sqe []byte, fd int, op uint32, commitID uint64, qid uint16, iov *[2]unix.Iovec) {
	sqe[0] = opURingCmd
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
	*(*uint32)(unsafe.Pointer(&sqe[8])) = op
	if iov != nil {
		*(*uint64)(unsafe.Pointer(&sqe[16])) = uint64(uintptr(unsafe.Pointer(iov)))
		*(*uint32)(unsafe.Pointer(&sqe[24])) = 2
	}
	// cmd: flags (48), commit_id (56), qid (64).
	*(*uint64)(unsafe.Pointer(&sqe[56])) = commitID
	*(*uint16)(unsafe.Pointer(&sqe[64])) = qid
}
