package exclude

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMatch(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "patterns")
	if err := os.WriteFile(from, []byte("# comment\n*.log\n/top-only\n!keep.log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := New([]string{"/secret//dir/", "a+b", "plain"}, []string{"*.tmp", "x(1)", "cache/"}, []string{from})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"", false, false},
		{"secret", false, false},
		{"secret/dir", false, true},
		{"secret/dir/below/deep", false, true},
		{"secret/dirx", false, false},
		{"a+b", false, true},
		{"aab", false, false},
		{"plain", false, true},
		{"sub/plain", false, false}, // -exclude is anchored at the root
		{"x.tmp", false, true},
		{"d/e/x.tmp", false, true},
		{"x(1)", false, true},
		{"d/x(1)", false, true},
		{"x1", false, false},
		{"cache", true, true},
		{"cache", false, false}, // "cache/" only matches directories
		{"sub", true, false},
		{"secret/dir", true, true},
		{"d/x.tmp", true, true},
		{"cache/f", false, true},
		{"w.log", false, true},
		{"keep.log", false, false},
		{"top-only", false, true},
		{"d/top-only", false, false},
		{"normal.txt", false, false},
	}
	for _, c := range cases {
		if got := m.Match(c.path, c.isDir); got != c.want {
			t.Errorf("Match(%q, %v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}
	if m.Empty() {
		t.Error("Empty() on a non-empty matcher")
	}
}

func TestNilAndEmpty(t *testing.T) {
	var m *Matcher
	if m.Match("a", false) || !m.Empty() {
		t.Error("nil matcher must exclude nothing")
	}
	m2, err := New(nil, nil, nil)
	if err != nil || !m2.Empty() || m2.Match("a", false) {
		t.Errorf("empty matcher: %v %v", err, m2)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name                   string
		paths, wild, fromFiles []string
		isFrom                 bool
	}{
		{"unreadable file", nil, nil, []string{filepath.Join(t.TempDir(), "missing")}, true},
		{"root path", []string{"/"}, nil, nil, false},
		{"climbing path", []string{".."}, nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.paths, c.wild, c.fromFiles)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrExcludeFrom) != c.isFrom {
				t.Errorf("errors.Is(ErrExcludeFrom) = %v for %v", !c.isFrom, err)
			}
		})
	}
}
