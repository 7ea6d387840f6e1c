package tlog

import (
	"context"
	"log/slog"
	"sync"
)

// NoticeFirst returns a handler that forwards to h and calls notice once,
// right before the first record that h handles (for h and every handler
// derived from it with WithAttrs/WithGroup). It lets a caller explain
// where messages go only when there is a message.
func NoticeFirst(h slog.Handler, notice func()) slog.Handler {
	return &noticeHandler{h: h, once: &sync.Once{}, notice: notice}
}

type noticeHandler struct {
	h      slog.Handler
	once   *sync.Once
	notice func()
}

func (n *noticeHandler) Enabled(ctx context.Context, l slog.Level) bool { return n.h.Enabled(ctx, l) }

func (n *noticeHandler) Handle(ctx context.Context, r slog.Record) error {
	n.once.Do(n.notice)
	return n.h.Handle(ctx, r)
}

func (n *noticeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &noticeHandler{h: n.h.WithAttrs(as), once: n.once, notice: n.notice}
}

func (n *noticeHandler) WithGroup(name string) slog.Handler {
	return &noticeHandler{h: n.h.WithGroup(name), once: n.once, notice: n.notice}
}
