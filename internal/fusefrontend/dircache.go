package fusefrontend

import (
	"sync"
	"time"

	"gocryptfs/internal/syscallcompat"
)

// dirCache remembers, for a few recently used plaintext directory paths, an
// open fd of the backing directory and its IV, so that consecutive
// operations in one directory do not walk CIPHERDIR from the root and reread
// gocryptfs.diriv every time.
//
// It is keyed by plaintext path, so every operation that can change what a
// path refers to (rename, rmdir) calls clear. A walk that started before a
// clear must not repopulate the cache with what it found, which the
// generation number prevents. Entries also expire after a second so that
// changes made behind our back in CIPHERDIR are picked up quickly.
type dirCache struct {
	mu       sync.Mutex
	disabled bool
	gen      uint64
	entries  map[string]dirCacheEntry
}

type dirCacheEntry struct {
	fd      int
	iv      []byte
	expires time.Time
}

const (
	dirCacheSize = 20
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

// get returns a duplicate of the cached fd for path (the caller closes it)
// and the directory IV.
func (c *dirCache) get(path string) (int, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok {
		return -1, nil, false
	}
	if time.Now().After(e.expires) {
		syscallcompat.Close(e.fd)
		delete(c.entries, path)
		return -1, nil, false
	}
	fd, err := syscallcompat.Dup(e.fd)
	if err != nil {
		return -1, nil, false
	}
	return fd, e.iv, true
}

// put stores a duplicate of fd for path unless the cache was cleared since
// generation gen was read.
func (c *dirCache) put(path string, fd int, iv []byte, gen uint64) {
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
	dup, err := syscallcompat.Dup(fd)
	if err != nil {
		return
	}
	c.entries[path] = dirCacheEntry{fd: dup, iv: iv, expires: time.Now().Add(dirCacheTTL)}
}

// evictLocked drops expired entries, or one entry with the earliest expiry
// if none has expired.
func (c *dirCache) evictLocked() {
	now := time.Now()
	oldest := ""
	var oldestT time.Time
	for p, e := range c.entries {
		if now.After(e.expires) {
			syscallcompat.Close(e.fd)
			delete(c.entries, p)
			continue
		}
		if oldest == "" || e.expires.Before(oldestT) {
			oldest, oldestT = p, e.expires
		}
	}
	if len(c.entries) >= dirCacheSize && oldest != "" {
		syscallcompat.Close(c.entries[oldest].fd)
		delete(c.entries, oldest)
	}
}

// clear forgets everything; called after any rename or rmdir.
func (c *dirCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for p, e := range c.entries {
		syscallcompat.Close(e.fd)
		delete(c.entries, p)
	}
}
