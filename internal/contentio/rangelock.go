package contentio

import "sync"

// rangeLock is a reader/writer lock on ranges of block numbers of one
// inode: holders of overlapping ranges exclude each other unless both are
// shared, holders of disjoint ranges do not wait for each other. It keeps
// its holders in a fixed-size table so that locking allocates nothing; when
// the table is full, new requests wait for a slot. Requests are granted
// atomically (all or nothing), so there is no lock order and no deadlock
// between ranges; a waiter is woken by every release and re-checks. An
// exclusive request can be overtaken by a stream of overlapping shared
// ones; in practice the kernel bounds the number of requests in flight.
//
// The zero value is unlocked and ready to use. Where it sits in the lock
// order of an inode: docs/internals.md.
type rangeLock struct {
	mu    sync.Mutex
	cond  sync.Cond // cond.L is &mu, set on first use
	held  [rangeSlots]blockRange
	inUse [rangeSlots]bool
}

// rangeSlots bounds the number of concurrent holders of one inode's range
// lock: a handful of FUSE requests in flight, with room to spare.
const rangeSlots = 32

// blockRange is the inclusive range of block numbers [first, last].
type blockRange struct {
	first, last uint64
	excl        bool
}

// conflicts reports whether r and o may not be held at once.
func (r blockRange) conflicts(o blockRange) bool {
	return (r.excl || o.excl) && r.first <= o.last && o.first <= r.last
}

// lock waits until r can be held and takes it; it returns the slot to pass
// to unlock.
func (l *rangeLock) lock(r blockRange) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cond.L == nil {
		l.cond.L = &l.mu
	}
	for {
		free := -1
		ok := true
		for i := range l.held {
			if !l.inUse[i] {
				if free < 0 {
					free = i
				}
				continue
			}
			if l.held[i].conflicts(r) {
				ok = false
				break
			}
		}
		if ok && free >= 0 {
			l.held[free], l.inUse[free] = r, true
			return free
		}
		l.cond.Wait()
	}
}

// unlock releases the range held in slot.
func (l *rangeLock) unlock(slot int) {
	l.mu.Lock()
	l.inUse[slot] = false
	l.mu.Unlock()
	l.cond.Broadcast()
}
