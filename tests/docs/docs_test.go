// Package docs_test keeps the documentation in step with the binaries: every
// flag that "gocryptfs -hh" lists must be described in docs/cli.md and in
// the man page docs/man/gocryptfs.1, and every flag of "gocryptfs-xray -h"
// in docs/cli.md and docs/man/gocryptfs-xray.1. A flag added without
// documentation fails here, with its name and the file that lacks it.
// Every test that docs/threat-model.md cites for a claim must exist
// (threatmodel_test.go).
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

// citation matches a reference to a section of docs/format.md or
// docs/cli.md in a comment ("docs/format.md 4.5", "docs/cli.md section 3",
// "docs/format.md TV-14", "docs/format.md 6.2, 6.3, 6.7").
var citation = regexp.MustCompile(`docs/(format|cli)\.md,?\s+(?:sections?\s+)?((?:\d+(?:\.\d+)?|TV-\d+)(?:(?:, |/|-| and )(?:\d+(?:\.\d+)?|TV-\d+))*)`)

// sectionNumber splits the section list of a citation.
var sectionNumber = regexp.MustCompile(`TV-\d+|\d+(?:\.\d+)?`)

// heading matches a numbered heading of the docs: "## 6. File names",
// "### 6.6 Long names", "### TV-14 Reverse mode".
var heading = regexp.MustCompile(`(?m)^#{2,3} (TV-\d+|\d+(?:\.\d+)?)\.? `)

// commentBreak joins comment lines, so that a citation wrapped after the
// file name is still seen whole.
var commentBreak = regexp.MustCompile(`\n\s*//\s*`)

// Every section that a comment or README cites exists in the cited file,
// so renumbering a section cannot leave stale references behind.
// staleCitation matches citations of the spec files outside the
// repository, which the docs replace.
var staleCitation = regexp.MustCompile(`\b(FORMAT|CLI)\.md\b|shared/spec`)

func TestCitedSectionsExist(t *testing.T) {
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string]bool{}
	for _, doc := range []string{"format", "cli"} {
		sections[doc] = map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(readDoc(t, "docs/"+doc+".md"), -1) {
			sections[doc][m[1]] = true
		}
	}
	if len(sections["format"]) < 50 || len(sections["cli"]) < 20 {
		t.Fatalf("too few headings found: %d in format.md, %d in cli.md", len(sections["format"]), len(sections["cli"]))
	}
	cited := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".bash")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		// The spec files a clone does not have: cite docs/ instead.
		if m := staleCitation.Find(b); m != nil && rel != "tests/docs/docs_test.go" {
			t.Errorf("%s cites %q, which is not in the repository (use docs/format.md or docs/cli.md)", rel, m)
		}
		for _, m := range citation.FindAllStringSubmatch(commentBreak.ReplaceAllString(string(b), " "), -1) {
			for _, s := range sectionNumber.FindAllString(m[2], -1) {
				cited++
				if !sections[m[1]][s] {
					t.Errorf("%s cites docs/%s.md section %s, which does not exist (%q)", rel, m[1], s, m[0])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d section citations checked", cited)
	if cited < 100 {
		t.Errorf("only %d citations found; is the pattern still right?", cited)
	}
}

// install.bash puts both binaries and both man pages where PREFIX and
// DESTDIR say. It runs on a copy of the script with stand-in binaries, so
// the test writes nothing into the source tree.
func TestInstallScript(t *testing.T) {
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	copyFile := func(from, to string, mode os.FileMode) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(root, "install.bash"), filepath.Join(src, "install.bash"), 0o755)
	for _, m := range []string{"gocryptfs.1", "gocryptfs-xray.1"} {
		copyFile(filepath.Join(root, "docs", "man", m), filepath.Join(src, "docs", "man", m), 0o600)
	}
	copyFile(gocryptfsBin, filepath.Join(src, "gocryptfs"), 0o700)
	copyFile(xrayBin, filepath.Join(src, "gocryptfs-xray", "gocryptfs-xray"), 0o700)

	dest := t.TempDir()
	r := testutil.Run(t, testutil.RunOptions{Env: []string{"DESTDIR=" + dest, "PREFIX=/opt/gcfs"}}, filepath.Join(src, "install.bash"))
	testutil.Expect(t, r, 0)
	for p, mode := range map[string]os.FileMode{
		"bin/gocryptfs":                   0o755,
		"bin/gocryptfs-xray":              0o755,
		"share/man/man1/gocryptfs.1":      0o644,
		"share/man/man1/gocryptfs-xray.1": 0o644,
	} {
		st, err := os.Stat(filepath.Join(dest, "opt", "gcfs", p))
		if err != nil {
			t.Errorf("%s not installed: %v", p, err)
		} else if st.Mode().Perm() != mode {
			t.Errorf("%s has mode %o, want %o", p, st.Mode().Perm(), mode)
		}
	}
}
