// Package tlog builds the *slog.Logger values that gocryptfs uses for its
// user-visible output: informational and debug lines on stdout, warnings and
// errors on stderr (docs/cli.md section 6), optionally coloured, or syslog once
// the process has daemonized. It holds no global state: every logger is
// constructed explicitly and passed down.
package tlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"log/syslog"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// colorKey is the attribute key that selects a colour for one record. It is
// consumed by the handlers and never printed.
const colorKey = "tlog.color"

// ANSI escape sequences (docs/cli.md section 6: green success, yellow warnings and
// notices, red fatal errors, dim grey hints).
const (
	ansiReset  = "\033[0m"
	ansiRed    = "\033[31m"
	ansiGreen  = "\033[32m"
	ansiYellow = "\033[33m"
	ansiGrey   = "\033[2m"
)

// Green marks a record as a success message (printed green on a colour terminal).
func Green() slog.Attr { return slog.String(colorKey, ansiGreen) }

// Yellow marks an informational record as a notice (printed yellow).
func Yellow() slog.Attr { return slog.String(colorKey, ansiYellow) }

// Grey marks a record as a hint (printed dim).
func Grey() slog.Attr { return slog.String(colorKey, ansiGrey) }

// Options configures New.
type Options struct {
	// Stdout receives debug and info records; nil means os.Stdout.
	Stdout io.Writer
	// Stderr receives warnings and errors; nil means os.Stderr.
	Stderr io.Writer
	// Quiet suppresses info and debug records (-q).
	Quiet bool
	// Debug enables debug records (-d); Quiet wins if both are set.
	Debug bool
	// Color enables ANSI colours; see ColorAllowed.
	Color bool
	// WPanic turns every warning or error into a panic after it has been
	// printed (-wpanic, used by tests to catch unexpected warnings).
	WPanic bool
}

// Level returns the minimum level implied by the quiet/debug flags.
func Level(quiet, debug bool) slog.Level {
	switch {
	case quiet:
		return slog.LevelWarn
	case debug:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// ColorAllowed reports whether coloured output is appropriate: stdout and
// stderr are terminals and NO_COLOR is unset (https://no-color.org).
func ColorAllowed() bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return term.IsTerminal(int(os.Stdout.Fd())) && term.IsTerminal(int(os.Stderr.Fd()))
}

// Discard returns a logger that drops everything; used when a caller passes nil.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// New returns a logger writing plain "message key=value..." lines, info and
// debug to Stdout, warnings and errors to Stderr.
func New(o Options) *slog.Logger {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	h := &textHandler{
		shared: &shared{out: o.Stdout, err: o.Stderr, color: o.Color, wpanic: o.WPanic},
		level:  Level(o.Quiet, o.Debug),
	}
	return slog.New(h)
}

// shared is the state all handlers derived by WithAttrs/WithGroup share; the
// mutex keeps lines from different goroutines from interleaving.
type shared struct {
	mu     sync.Mutex
	out    io.Writer
	err    io.Writer
	color  bool
	wpanic bool
}

type textHandler struct {
	*shared
	level  slog.Level
	prefix string // group prefix for attribute keys, "g1.g2."
	attrs  string // preformatted " key=value" pairs from WithAttrs
	color  string // colour selected by WithAttrs(Green()) etc.
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	color := h.color
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == colorKey {
			color = a.Value.String()
			return true
		}
		appendAttr(&b, h.prefix, a)
		return true
	})
	line := b.String()
	w := h.shared.out
	switch {
	case r.Level >= slog.LevelError:
		w, color = h.shared.err, ansiRed
	case r.Level >= slog.LevelWarn:
		w, color = h.shared.err, ansiYellow
	}
	if h.shared.color && color != "" {
		line = color + line + ansiReset
	}
	h.shared.mu.Lock()
	_, err := io.WriteString(w, line+"\n")
	h.shared.mu.Unlock()
	if h.shared.wpanic && r.Level >= slog.LevelWarn {
		panic("-wpanic turns this warning into a panic: " + r.Message)
	}
	return err
}

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		if a.Key == colorKey {
			n.color = a.Value.String()
			continue
		}
		appendAttr(&b, h.prefix, a)
	}
	n.attrs = b.String()
	return &n
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.prefix = h.prefix + name + "."
	return &n
}

// appendAttr formats one attribute as " key=value", flattening groups.
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	v := a.Value.String()
	if strings.ContainsAny(v, " \t\n\"=") || v == "" {
		v = fmt.Sprintf("%q", v)
	}
	b.WriteString(" ")
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteString("=")
	b.WriteString(v)
}

// syslogWriter is the subset of *syslog.Writer the syslog handler uses.
type syslogWriter interface {
	Debug(string) error
	Info(string) error
	Warning(string) error
	Err(string) error
}

// NewSyslogHandler returns a handler that sends every record to the local
// syslog daemon with facility "user" and the given ident (docs/cli.md 5.2:
// "gocryptfs"). It is used after daemonizing, when stdout/stderr no longer
// reach the user.
func NewSyslogHandler(ident string, quiet, debug bool) (slog.Handler, error) {
	w, err := syslog.New(syslog.LOG_USER|syslog.LOG_INFO, ident)
	if err != nil {
		return nil, fmt.Errorf("connecting to syslog: %w", err)
	}
	return newSyslogHandler(w, Level(quiet, debug)), nil
}

func newSyslogHandler(w syslogWriter, level slog.Level) *syslogHandler {
	return &syslogHandler{w: w, level: level, mu: &sync.Mutex{}}
}

type syslogHandler struct {
	w      syslogWriter
	mu     *sync.Mutex
	level  slog.Level
	prefix string
	attrs  string
}

func (h *syslogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *syslogHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != colorKey {
			appendAttr(&b, h.prefix, a)
		}
		return true
	})
	msg := b.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case r.Level >= slog.LevelError:
		return h.w.Err(msg)
	case r.Level >= slog.LevelWarn:
		return h.w.Warning(msg)
	case r.Level >= slog.LevelInfo:
		return h.w.Info(msg)
	}
	return h.w.Debug(msg)
}

func (h *syslogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		if a.Key != colorKey {
			appendAttr(&b, h.prefix, a)
		}
	}
	n.attrs = b.String()
	return &n
}

func (h *syslogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.prefix = h.prefix + name + "."
	return &n
}
