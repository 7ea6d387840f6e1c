package testutil

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// SyncBuffer collects log output written by concurrent FUSE requests; its
// zero value is ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// CountLines counts the lines written so far that contain substr.
func (s *SyncBuffer) CountLines(substr string) int {
	n := 0
	for line := range strings.SplitSeq(s.String(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// Logger returns a text logger at level that writes into s, for the
// components under test (every component takes a *slog.Logger).
func (s *SyncBuffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: level}))
}
