package nametransform

import (
	"strings"
	"sync"
	"time"
)

// DirIVCache remembers directory IVs by ciphertext directory path (relative
// to CIPHERDIR, "" for the root) so that lookups need not reread
// gocryptfs.diriv. It is bounded and safe for concurrent use. Entries are
// trusted only for ttl, because the backing directory can change behind the
// mount's back; the frontend must also call Invalidate when it renames or
// removes a directory.
type DirIVCache struct {
	mu       sync.Mutex
	capacity int
	ttl      time.Duration
	entries  map[string]dirIVEntry
}

type dirIVEntry struct {
	iv    [DirIVLen]byte
	added time.Time
}

// NewDirIVCache returns a cache holding at most capacity entries (at least
// 1) that expire after ttl (0: never).
func NewDirIVCache(capacity int, ttl time.Duration) *DirIVCache {
	if capacity < 1 {
		capacity = 1
	}
	return &DirIVCache{capacity: capacity, ttl: ttl, entries: make(map[string]dirIVEntry, capacity)}
}

// Get returns the cached IV of the directory at dirPath.
func (c *DirIVCache) Get(dirPath string) (iv [DirIVLen]byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[dirPath]
	if !ok {
		return iv, false
	}
	if c.ttl > 0 && time.Since(e.added) > c.ttl {
		delete(c.entries, dirPath)
		return iv, false
	}
	return e.iv, true
}

// Put stores the IV of the directory at dirPath; an iv of the wrong length
// is ignored. When the cache is full an arbitrary entry is evicted.
func (c *DirIVCache) Put(dirPath string, iv []byte) {
	if len(iv) != DirIVLen {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.entries[dirPath]; !exists && len(c.entries) >= c.capacity {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	e := dirIVEntry{added: time.Now()}
	copy(e.iv[:], iv)
	c.entries[dirPath] = e
}

// Invalidate forgets dirPath and every directory below it (their paths
// change when dirPath is renamed). Invalidate("") clears the cache.
func (c *DirIVCache) Invalidate(dirPath string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if dirPath == "" {
		clear(c.entries)
		return
	}
	delete(c.entries, dirPath)
	prefix := dirPath + "/"
	for k := range c.entries {
		if strings.HasPrefix(k, prefix) {
			delete(c.entries, k)
		}
	}
}

// Clear forgets everything.
func (c *DirIVCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}
