package fusefrontend

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gocryptfs/internal/syscallcompat"
)

// dirRef is a reference-counted fd of a backing directory. Operations
// borrow the cached fd of their parent directory instead of duplicating
// it, which saves a dup(2) and a close(2) per lookup, getattr, unlink and
// create. The fd is closed when the last reference is released, so an
// entry evicted from the cache stays usable by the operations that still
// hold it.
type dirRef struct {
	fd   int
	refs atomic.Int32
}

// newDirRef wraps fd, which the returned reference now owns.
func newDirRef(fd int) *dirRef {
	r := &dirRef{fd: fd}
	r.refs.Store(1)
	return r
}

// acquire adds a reference; the caller must already hold one (or the
// cache lock while the cache holds one).
func (r *dirRef) acquire() *dirRef {
	r.refs.Add(1)
	return r
}

// release drops a reference and closes the fd with the last one.
func (r *dirRef) release() {
	if r.refs.Add(-1) == 0 {
		syscallcompat.Close(r.fd)
	}
}

// dirCache remembers, for recently used plaintext directory paths, an open
// fd of the backing directory and its IV, so that consecutive operations
// in one directory do not walk CIPHERDIR from the root and reread
// gocryptfs.diriv every time.
//
// It is keyed by plaintext path, so every operation that can change what a
// path refers to (rename, rmdir) drops the paths at and below the names it
// changed (invalidate). A walk that started before an invalidation must
// not repopulate the cache with what it found, which the generation number
// prevents. Entries also expire after a second so that changes made behind
// our back in CIPHERDIR are picked up quickly; with -sharedstorage nothing
// is cached at all.
type dirCache struct {
	mu       sync.Mutex
	disabled bool
	gen      uint64
	entries  map[string]dirCacheEntry
}

type dirCacheEntry struct {
	ref     *dirRef
	iv      []byte
	expires time.Time
}

const (
	// dirCacheSize bounds the number of cached directory fds. A
	// recursive walk (ls -lR, rm -rf) works in a directory and its
	// ancestors at a time, which this covers many times over.
	dirCacheSize = 64
	dirCacheTTL  = time.Second
)

func newDirCache(disabled bool) *dirCache {
	return &dirCache{disabled: disabled, entries: make(map[string]dirCacheEntry)}
}

// generation returns the value to pass to put for a walk starting now.
func (c *dirCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get returns a reference to the cached fd for path (the caller releases
// it) and the directory IV.
func (c *dirCache) get(path string) (*dirRef, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok {
		return nil, nil, false
	}
	if time.Now().After(e.expires) {
		e.ref.release()
		delete(c.entries, path)
		return nil, nil, false
	}
	return e.ref.acquire(), e.iv, true
}

// put stores a reference to ref for path unless the cache was invalidated
// since generation gen was read.
func (c *dirCache) put(path string, ref *dirRef, iv []byte, gen uint64) {
	if c.disabled {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if _, ok := c.entries[path]; ok {
		return
	}
	if len(c.entries) >= dirCacheSize {
		c.evictLocked()
	}
	c.entries[path] = dirCacheEntry{ref: ref.acquire(), iv: iv, expires: time.Now().Add(dirCacheTTL)}
}

// evictLocked drops expired entries, or one entry with the earliest expiry
// if none has expired.
func (c *dirCache) evictLocked() {
	now := time.Now()
	oldest := ""
	var oldestT time.Time
	for p, e := range c.entries {
		if now.After(e.expires) {
			e.ref.release()
			delete(c.entries, p)
			continue
		}
		if oldest == "" || e.expires.Before(oldestT) {
			oldest, oldestT = p, e.expires
		}
	}
	if len(c.entries) >= dirCacheSize && oldest != "" {
		c.entries[oldest].ref.release()
		delete(c.entries, oldest)
	}
}

// invalidate forgets the given plaintext paths and everything below them;
// called after a rename or rmdir changed what they refer to. The cached
// fds of other directories stay valid: a directory fd refers to the
// directory itself wherever it moves, and the IV moves with it.
func (c *dirCache) invalidate(paths ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for p, e := range c.entries {
		for _, q := range paths {
			if p == q || q == "" || strings.HasPrefix(p, q) && p[len(q)] == '/' {
				e.ref.release()
				delete(c.entries, p)
				break
			}
		}
	}
}

// clear forgets everything.
func (c *dirCache) clear() {
	c.invalidate("")
}
