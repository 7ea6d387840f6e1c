package tlog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRouting(t *testing.T) {
	cases := []struct {
		name             string
		opts             Options
		log              func(l *slog.Logger)
		wantOut, wantErr string
	}{
		{"info to stdout", Options{}, func(l *slog.Logger) { l.Info("hello") }, "hello\n", ""},
		{"warn to stderr", Options{}, func(l *slog.Logger) { l.Warn("careful") }, "", "careful\n"},
		{"error to stderr", Options{}, func(l *slog.Logger) { l.Error("bad", "err", "x y") }, "", "bad err=\"x y\"\n"},
		{"debug hidden", Options{}, func(l *slog.Logger) { l.Debug("dbg") }, "", ""},
		{"debug shown", Options{Debug: true}, func(l *slog.Logger) { l.Debug("dbg", "n", 3) }, "dbg n=3\n", ""},
		{"quiet hides info", Options{Quiet: true}, func(l *slog.Logger) { l.Info("hello") }, "", ""},
		{"quiet keeps warn", Options{Quiet: true}, func(l *slog.Logger) { l.Warn("w") }, "", "w\n"},
		{"color attr not printed", Options{}, func(l *slog.Logger) { l.Info("ok", Green()) }, "ok\n", ""},
		{"green", Options{Color: true}, func(l *slog.Logger) { l.Info("ok", Green()) }, ansiGreen + "ok" + ansiReset + "\n", ""},
		{"red error", Options{Color: true}, func(l *slog.Logger) { l.Error("no") }, "", ansiRed + "no" + ansiReset + "\n"},
		{"with attrs and group", Options{}, func(l *slog.Logger) { l.With("a", 1).WithGroup("g").Info("m", "b", 2) }, "m a=1 g.b=2\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			c.opts.Stdout, c.opts.Stderr = &out, &errb
			c.log(New(c.opts))
			if out.String() != c.wantOut || errb.String() != c.wantErr {
				t.Errorf("got stdout %q stderr %q, want %q %q", out.String(), errb.String(), c.wantOut, c.wantErr)
			}
		})
	}
}

func TestWPanic(t *testing.T) {
	var out bytes.Buffer
	l := New(Options{Stdout: &out, Stderr: &out, WPanic: true})
	l.Info("fine")
	defer func() {
		if recover() == nil {
			t.Error("warning did not panic")
		}
		if !strings.Contains(out.String(), "oops") {
			t.Error("warning not printed before panicking")
		}
	}()
	l.Warn("oops")
}

type fakeSyslog struct{ lines []string }

func (f *fakeSyslog) Debug(m string) error   { f.lines = append(f.lines, "debug:"+m); return nil }
func (f *fakeSyslog) Info(m string) error    { f.lines = append(f.lines, "info:"+m); return nil }
func (f *fakeSyslog) Warning(m string) error { f.lines = append(f.lines, "warning:"+m); return nil }
func (f *fakeSyslog) Err(m string) error     { f.lines = append(f.lines, "err:"+m); return nil }

func TestSyslogHandler(t *testing.T) {
	f := &fakeSyslog{}
	l := slog.New(newSyslogHandler(f, slog.LevelInfo))
	l.Debug("hidden")
	l.Info("mounted", Green())
	l.Warn("w", "k", "v")
	l.Error("e")
	want := []string{"info:mounted", "warning:w k=v", "err:e"}
	if strings.Join(f.lines, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", f.lines, want)
	}
}

func TestSwitch(t *testing.T) {
	var a, b bytes.Buffer
	sw := NewSwitch(New(Options{Stdout: &a, Stderr: &a}).Handler())
	derived := slog.New(sw).With("k", "v")
	derived.Info("one")
	sw.Set(New(Options{Stdout: &b, Stderr: &b}).Handler())
	derived.Info("two")
	if a.String() != "one k=v\n" || b.String() != "two k=v\n" {
		t.Errorf("got %q and %q", a.String(), b.String())
	}
}

// TestNoticeFirst: the notice comes once, before the first record that is
// handled, also through derived handlers, and never without a record.
func TestNoticeFirst(t *testing.T) {
	var buf bytes.Buffer
	notices := 0
	h := NoticeFirst(New(Options{Stdout: &buf, Stderr: &buf}).Handler(), func() {
		notices++
		buf.WriteString("notice\n")
	})
	log := slog.New(h)
	log.Debug("filtered")
	if notices != 0 {
		t.Fatal("notice without a record")
	}
	log.With("k", "v").Info("first")
	log.WithGroup("g").Warn("second")
	if want := "notice\nfirst k=v\nsecond\n"; buf.String() != want || notices != 1 {
		t.Errorf("got %q (%d notices), want %q", buf.String(), notices, want)
	}
}
