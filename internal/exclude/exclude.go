// Package exclude decides which plaintext paths a reverse mount hides
// (-exclude, -exclude-wildcard and -exclude-from, docs/cli.md section 3.3).
//
// -exclude names literal paths relative to the plaintext root: the path
// itself and everything below it are excluded. -exclude-wildcard patterns
// and the lines of -exclude-from files use gitignore syntax and are matched
// with github.com/sabhiram/go-gitignore.
package exclude

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// ErrExcludeFrom is wrapped by the error New returns when an -exclude-from
// file cannot be read; the CLI maps it to exit code 29.
var ErrExcludeFrom = errors.New("cannot read exclusion patterns")

// Matcher reports whether a plaintext path is excluded. The zero value and
// a nil *Matcher exclude nothing. A Matcher is immutable and safe for
// concurrent use.
type Matcher struct {
	literal map[string]struct{}
	globs   *ignore.GitIgnore
}

// New builds a Matcher from the three option lists. Literal paths are
// cleaned (leading slashes, "." and duplicate slashes removed); a literal
// path that is empty after cleaning or climbs above the root is an error.
// An unreadable -exclude-from file gives an error wrapping ErrExcludeFrom.
func New(paths, wildcards, fromFiles []string) (*Matcher, error) {
	m := &Matcher{literal: make(map[string]struct{}, len(paths))}
	for _, p := range paths {
		c, ok := cleanRel(p)
		if !ok {
			return nil, fmt.Errorf("invalid -exclude path %q", p)
		}
		m.literal[c] = struct{}{}
	}
	lines := make([]string, 0, len(wildcards))
	for _, w := range wildcards {
		lines = append(lines, escapeRegexp(w))
	}
	for _, f := range fromFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrExcludeFrom, err)
		}
		for l := range strings.SplitSeq(string(data), "\n") {
			lines = append(lines, escapeRegexp(l))
		}
	}
	if len(lines) > 0 {
		m.globs = ignore.CompileIgnoreLines(lines...)
	}
	return m, nil
}

// Match reports whether the plaintext path rel ("a/b/c", no leading slash;
// "" is the root) is excluded. isDir tells whether rel is a directory, which
// gitignore patterns ending in "/" require. The root is never excluded. A
// path below an excluded literal directory is excluded as well.
func (m *Matcher) Match(rel string, isDir bool) bool {
	if m == nil || rel == "" {
		return false
	}
	if len(m.literal) > 0 {
		for p := rel; ; {
			if _, ok := m.literal[p]; ok {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	if m.globs == nil {
		return false
	}
	if isDir {
		// The library only knows strings; a trailing slash is how it
		// recognises a directory for "dir/" patterns.
		return m.globs.MatchesPath(rel + "/")
	}
	return m.globs.MatchesPath(rel)
}

// cleanRel turns a user-supplied path into the canonical relative form used
// by Match.
func cleanRel(p string) (string, bool) {
	c := path.Clean("/" + p)
	c = strings.TrimPrefix(c, "/")
	if c == "" || c == "." {
		return "", false
	}
	return c, true
}

// escapeRegexp protects characters that go-gitignore copies verbatim into
// the regular expression it builds, although in gitignore syntax they stand
// for themselves. Without this, "a+b" would not match a file called "a+b"
// and "x(" would make the whole pattern silently ineffective. Glob
// characters (* ? [ ] \) and the "." the library escapes itself are left
// alone.
func escapeRegexp(line string) string {
	if !strings.ContainsAny(line, "+()|^${}") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '+', '(', ')', '|', '^', '$', '{', '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
