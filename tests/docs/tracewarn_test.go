package docs_test

import (
	"slices"
	"strings"
	"testing"
)

// traceWarnings are the phrases with which the docs warn what the -d and
// -fusedebug traces reveal (issue 19, finding 7), for the flag's entry in
// the table of docs/cli.md and in the man page.
var traceWarnings = []struct {
	cliRow, manEntry string // how the entry starts (man page as plainRoff text)
	phrases          []string
}{
	{"| `-debug`, `-d` |", ".BR -debug \", \" -d", []string{"plaintext file names", "syslog"}},
	{"| `-fusedebug` |", ".B -fusedebug", []string{"plaintext names, symlink targets and the first bytes of the data"}},
}

// flat removes markdown emphasis and joins lines and runs of blanks, so
// that a phrase is found across line breaks and bold text.
func flat(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s, "**", "")), " "))
}

// entry returns the part of text from the line that starts with start up
// to the next blank line or line that starts with one of the ends (or the
// end of text); "" when no line starts with start.
func entry(text, start string, ends ...string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, start) {
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "" || slices.ContainsFunc(ends, func(e string) bool { return strings.HasPrefix(lines[j], e) }) {
				break
			}
		}
		return strings.Join(lines[i:j], "\n")
	}
	return ""
}

// missing returns the phrases that text does not contain.
func missing(text string, phrases []string) []string {
	var out []string
	for _, p := range phrases {
		if !strings.Contains(flat(text), flat(p)) {
			out = append(out, p)
		}
	}
	return out
}

// TestTraceWarningsDocumented (issue 19, finding 7): docs/cli.md (the
// flag table and "What the traces reveal" in 6.7) and the man page warn
// that the -d trace carries plaintext names and goes to syslog in the
// background, and that -fusedebug logs plaintext names, symlink targets
// and the first bytes of the data. tests/cli.TestDebugTrace shows the -d
// trace does carry names.
func TestTraceWarningsDocumented(t *testing.T) {
	cli := readDoc(t, "docs/cli.md")
	man := readDoc(t, "docs/man/gocryptfs.1")
	for _, w := range traceWarnings {
		row := entry(cli, w.cliRow, "|")
		if row == "" {
			t.Errorf("docs/cli.md: no table row %q", w.cliRow)
		} else if m := missing(row, w.phrases); m != nil {
			t.Errorf("docs/cli.md %s lacks %q", w.cliRow, m)
		}
		e := entry(man, w.manEntry, ".TP", ".SH")
		if e == "" {
			t.Errorf("docs/man/gocryptfs.1: no entry %q", w.manEntry)
		} else if m := missing(e, w.phrases); m != nil {
			t.Errorf("docs/man/gocryptfs.1 %s lacks %q", w.manEntry, m)
		}
	}
	reveal := entry(cli, "**What the traces reveal:**", "#")
	if m := missing(reveal, []string{"-d", "plaintext file and directory names", "syslog",
		"-fusedebug", "symlink targets", "the first bytes of the data"}); m != nil {
		t.Errorf("docs/cli.md 6.7 \"What the traces reveal\" lacks %q", m)
	}
	// The checker itself: a row without the warning is seen as such.
	if m := missing(entry("| `-debug`, `-d` | bool | Debug messages. |\n", traceWarnings[0].cliRow, "|"), traceWarnings[0].phrases); len(m) != 2 {
		t.Errorf("checker missed the absent warning: %q", m)
	}
}
