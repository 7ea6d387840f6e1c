package tlog

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// Switch is a slog.Handler whose destination can be replaced while loggers
// derived from it are in use. The daemonized mount process needs this: its
// components receive their logger before mounting, and only after mounting
// does the output move from the terminal to syslog.
type Switch struct {
	state *atomic.Pointer[slog.Handler]
	// ops replays With/WithGroup calls on whatever handler is current.
	ops []func(slog.Handler) slog.Handler
}

// NewSwitch returns a Switch that initially forwards to h.
func NewSwitch(h slog.Handler) *Switch {
	p := &atomic.Pointer[slog.Handler]{}
	p.Store(&h)
	return &Switch{state: p}
}

// Set makes every logger derived from this Switch (or from its root) write
// to h from now on.
func (s *Switch) Set(h slog.Handler) { s.state.Store(&h) }

func (s *Switch) current() slog.Handler {
	h := *s.state.Load()
	for _, op := range s.ops {
		h = op(h)
	}
	return h
}

// Enabled reports whether the current destination wants level l.
func (s *Switch) Enabled(ctx context.Context, l slog.Level) bool {
	return (*s.state.Load()).Enabled(ctx, l)
}

// Handle forwards r to the current destination.
func (s *Switch) Handle(ctx context.Context, r slog.Record) error {
	return s.current().Handle(ctx, r)
}

// WithAttrs returns a Switch sharing the destination, with attrs added.
func (s *Switch) WithAttrs(as []slog.Attr) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

// WithGroup returns a Switch sharing the destination, inside group name.
func (s *Switch) WithGroup(name string) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (s *Switch) with(op func(slog.Handler) slog.Handler) *Switch {
	ops := make([]func(slog.Handler) slog.Handler, len(s.ops), len(s.ops)+1)
	copy(ops, s.ops)
	return &Switch{state: s.state, ops: append(ops, op)}
}
