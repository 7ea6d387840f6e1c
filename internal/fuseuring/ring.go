//go:build linux

package fuseuring

// A minimal io_uring: one submission at a time, 128-byte SQEs, waited for
// by the thread that created it. It wraps the three system calls
// (io_uring_setup, mmap of the rings, io_uring_enter) instead of using a
// library: the Go io_uring libraries either lack SQE128 and
// IORING_OP_URING_CMD or wrap them behind a general submission queue we
// would not use; what is needed here fits in this file.

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// Kernel ABI of io_uring (include/uapi/linux/io_uring.h).
const (
	setupSQE128       = 1 << 10
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13

	featSingleMmap = 1 << 0

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	enterGetEvents = 1 << 0

	opURingCmd = 46

	sqeSize = 128 // with setupSQE128
	cqeSize = 16
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// ring is an io_uring instance with one submission slot in use at a time.
// Not safe for concurrent use: with setupSingleIssuer only the thread
// that created it may submit and wait.
type ring struct {
	fd              int
	sqMem, cqMem    []byte
	sqes            []byte
	sqTail, sqHead  *uint32
	sqMask          uint32
	sqArray         unsafe.Pointer
	cqHead, cqTail  *uint32
	cqMask          uint32
	cqes            unsafe.Pointer
	singleMmap      bool
	deferredTaskrun bool
}

// newRing sets up an io_uring with 128-byte SQEs. The calling goroutine
// must stay on its OS thread (runtime.LockOSThread) for the ring's life:
// completions are delivered to, and submitted by, that thread only.
func newRing(entries uint32) (*ring, error) {
	var p uringParams
	p.flags = setupSQE128 | setupSingleIssuer | setupDeferTaskrun
	fd, err := setup(entries, &p)
	if err == unix.EINVAL {
		// Kernels before 6.1 lack DEFER_TASKRUN; they lack FUSE over
		// io_uring too, but keep the error the one that matters.
		p = uringParams{flags: setupSQE128}
		fd, err = setup(entries, &p)
	}
	if err != nil {
		return nil, fmt.Errorf("io_uring_setup: %w", err)
	}
	r := &ring{fd: fd, deferredTaskrun: p.flags&setupDeferTaskrun != 0}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func setup(entries uint32, p *uringParams) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

func (r *ring) mmap(p *uringParams) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*cqeSize
	r.singleMmap = p.features&featSingleMmap != 0
	if r.singleMmap {
		sqSize = max(sqSize, cqSize)
		cqSize = sqSize
	}
	var err error
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap of the submission ring: %w", err)
	}
	if r.singleMmap {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap of the completion ring: %w", err)
	}
	if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("mmap of the submission entries: %w", err)
	}
	sq := unsafe.Pointer(&r.sqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Add(sq, p.sqOff.array)
	cq := unsafe.Pointer(&r.cqMem[0])
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Add(cq, p.cqOff.cqes)
	return nil
}

// close unmaps the rings and closes the instance; commands still in the
// kernel are cancelled by it.
func (r *ring) close() {
	if r.sqes != nil {
		_ = unix.Munmap(r.sqes)
	}
	if r.cqMem != nil && !r.singleMmap {
		_ = unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		_ = unix.Munmap(r.sqMem)
	}
	_ = unix.Close(r.fd)
}

// nextSQE returns the next free submission entry, zeroed, and queues it
// for the next enter. The caller fills it before calling enter.
func (r *ring) nextSQE() []byte {
	tail := *r.sqTail // only this thread writes the tail
	idx := tail & r.sqMask
	sqe := r.sqes[idx*sqeSize : (idx+1)*sqeSize : (idx+1)*sqeSize]
	clear(sqe)
	*(*uint32)(unsafe.Add(r.sqArray, idx*4)) = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	return sqe
}

// enter submits the queued entries and, with wait, blocks until a
// completion is there. A signal interrupting the call is retried; the
// number still to submit comes from the kernel's head each time, so a
// submission interrupted after the kernel took it is not repeated.
func (r *ring) enter(wait bool) error {
	var flags, minComplete uintptr
	if wait {
		flags, minComplete = enterGetEvents, 1
	}
	for {
		err := syscallcompat.Retry(func() error {
			pending := *r.sqTail - atomic.LoadUint32(r.sqHead)
			_, _, errno := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(pending), minComplete, flags, 0, 0)
			if errno != 0 {
				return errno
			}
			return nil
		})
		if err != nil && err != unix.EAGAIN && err != unix.EBUSY && err != syscallcompat.Interrupted {
			return fmt.Errorf("io_uring_enter: %w", err)
		}
		if *r.sqTail == atomic.LoadUint32(r.sqHead) && (!wait || r.ready()) {
			return nil
		}
	}
}

// ready reports whether a completion is waiting.
func (r *ring) ready() bool {
	return atomic.LoadUint32(r.cqTail) != *r.cqHead
}

// peek returns the result of the oldest completion without consuming it;
// ok is false when there is none.
func (r *ring) peek() (res int32, ok bool) {
	head := *r.cqHead
	if atomic.LoadUint32(r.cqTail) == head {
		return 0, false
	}
	return *(*int32)(unsafe.Add(r.cqes, (head&r.cqMask)*cqeSize+8)), true
}

// reap returns the result of the oldest completion and consumes it; ok is
// false when there is none.
func (r *ring) reap() (res int32, ok bool) {
	res, ok = r.peek()
	if ok {
		atomic.StoreUint32(r.cqHead, *r.cqHead+1)
	}
	return res, ok
}
