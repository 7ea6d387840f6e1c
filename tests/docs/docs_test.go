// Package docs_test keeps the documentation in step with the binaries: every
// flag that "gocryptfs -hh" lists must be described in docs/cli.md and in
// the man page docs/man/gocryptfs.1, and every flag of "gocryptfs-xray -h"
// in docs/cli.md and docs/man/gocryptfs-xray.1. A flag added without
// documentation fails here, with its name and the file that lacks it.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// The binaries under test, built by TestMain.
var gocryptfsBin, xrayBin string

func TestMain(m *testing.M) {
	b := testutil.Build{Packages: []string{".", "./gocryptfs-xray"}, Version: "v0.0.0-docstest", Date: "2001-02-03"}
	os.Exit(testutil.RunWithBinaries(m, b, func(dir string) {
		gocryptfsBin = filepath.Join(dir, "gocryptfs")
		xrayBin = filepath.Join(dir, "gocryptfs-xray")
	}))
}

// helpFlag matches a flag line of a help text: two spaces, then one or
// more flag names separated by ", " (gocryptfs -hh: "  -debug, -d"; Go's
// flag package: "  -0\tUse ...", "  -fido2 string").
var helpFlag = regexp.MustCompile(`^  (-[^\s,]*(?:, -[^\s,]*)*)`)

// flagsOf returns the flag names in a help text, with their dash, in order.
func flagsOf(help string) []string {
	var out []string
	for _, line := range strings.Split(help, "\n") {
		m := helpFlag.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, f := range strings.Split(m[1], ", ") {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// roffEscape matches the roff escapes the man pages use around flags:
// font changes and the named quote characters.
var roffEscape = regexp.MustCompile(`\\f[BIRP]|\\\((dq|aq)|\\&`)

// plainRoff turns a man page into text in which flags read as in a
// terminal: "\-" becomes "-", font escapes disappear.
func plainRoff(s string) string {
	return roffEscape.ReplaceAllString(strings.ReplaceAll(s, `\-`, "-"), "")
}

// mentions reports whether text names flag as a word of its own: not as
// part of a longer flag (-fido2 in -fido2-assert-option) or word.
func mentions(text, flag string) bool {
	isWord := func(c byte) bool {
		return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(text[i:], flag)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(flag)
		if (start == 0 || !isWord(text[start-1])) && (end == len(text) || !isWord(text[end])) {
			return true
		}
		i = start + 1
	}
}

// undocumented returns the flags that text does not mention.
func undocumented(text string, flags []string) []string {
	var out []string
	for _, f := range flags {
		if !mentions(text, f) {
			out = append(out, f)
		}
	}
	return out
}

// readDoc returns the file at rel (relative to the project root), as plain
// text for man pages.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(rel, ".1") {
		return plainRoff(string(b))
	}
	return string(b)
}

// checkDocumented fails the test for every flag of the help text of bin
// (run with helpArg) that one of docs does not mention.
func checkDocumented(t *testing.T, bin, helpArg string, minFlags int, docs ...string) {
	t.Helper()
	r := testutil.Run(t, testutil.RunOptions{}, bin, helpArg)
	testutil.Expect(t, r, 0)
	flags := flagsOf(r.Stdout + r.Stderr)
	// Guards the parser: a help format it no longer understands must not
	// make the check pass with nothing to check.
	if len(flags) < minFlags {
		t.Fatalf("%s %s: found only %d flags (%q), want at least %d; did the help format change?\n%s",
			filepath.Base(bin), helpArg, len(flags), flags, minFlags, r.Stdout+r.Stderr)
	}
	for _, doc := range docs {
		for _, f := range undocumented(readDoc(t, doc), flags) {
			t.Errorf("flag %s (listed by %s %s) is not documented in %s", f, filepath.Base(bin), helpArg, doc)
		}
	}
}

func TestGocryptfsFlagsDocumented(t *testing.T) {
	checkDocumented(t, gocryptfsBin, "-hh", 60, "docs/cli.md", "docs/man/gocryptfs.1")
}

func TestXrayFlagsDocumented(t *testing.T) {
	checkDocumented(t, xrayBin, "-h", 8, "docs/cli.md", "docs/man/gocryptfs-xray.1")
}

// The checker itself: flag lines of both help formats are found, and a
// flag is only documented by itself, not as part of a longer one.
func TestChecker(t *testing.T) {
	help := "Usage: x\n\nOptions:\n  -debug, -d\n    \tDebug\n  -fido2 DEVICE\n    \tToken\n" +
		"  -0\tNUL separator\n  -nofail, -_netdev, -defaults\n    \tIgnored\n  --\n    \tStop\n"
	want := []string{"-debug", "-d", "-fido2", "-0", "-nofail", "-_netdev", "-defaults", "--"}
	if got := flagsOf(help); !slices.Equal(got, want) {
		t.Errorf("flagsOf = %q, want %q", got, want)
	}
	doc := "Use `-fido2-assert-option` or -debug; -_netdev, --fg, and `--`."
	got := undocumented(doc, want)
	if wantMissing := []string{"-d", "-fido2", "-0", "-nofail", "-defaults"}; !slices.Equal(got, wantMissing) {
		t.Errorf("undocumented = %q, want %q", got, wantMissing)
	}
	if p := plainRoff(`.BR \-exclude ", " \-e " \fIPATH\fR"` + "\n" + `.B \-\-`); !mentions(p, "-e") || !mentions(p, "--") || !mentions(p, "-exclude") {
		t.Errorf("roff not understood: %q", p)
	}
}
