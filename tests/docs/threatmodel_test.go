package docs_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// threatModel is the file whose claims cite the tests that hold them.
const threatModel = "docs/threat-model.md"

// citedTest matches one citation of a "TEST:" line: a backquoted
// package directory (relative to the project root; "gocryptfs" is the
// root package), a dot, a test function name and an optional /subtest.
var citedTest = regexp.MustCompile("^`([a-z0-9][a-z0-9_./-]*)\\.((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)(/[^`]+)?`$")

// testCitations returns the items of every line of text that starts
// with "TEST:" (after indentation), with the line number; a list that
// ends in a comma continues on the next line.
func testCitations(text string) (items []string, lines []int) {
	ls := strings.Split(text, "\n")
	for i := 0; i < len(ls); i++ {
		rest, ok := strings.CutPrefix(strings.TrimSpace(ls[i]), "TEST:")
		if !ok {
			continue
		}
		start := i
		for i+1 < len(ls) && strings.TrimSpace(ls[i+1]) != "" && !strings.HasPrefix(strings.TrimSpace(ls[i+1]), "- ") &&
			!strings.HasPrefix(ls[i+1], "#") && strings.HasSuffix(strings.TrimSpace(rest), ",") {
			i++
			rest += " " + strings.TrimSpace(ls[i])
		}
		for it := range strings.SplitSeq(rest, ",") {
			items = append(items, strings.TrimSpace(it))
			lines = append(lines, start+1)
		}
	}
	return items, lines
}

// topLevelFuncs returns the names of the functions without receiver
// declared in the .go files (tests included) of dir.
func topLevelFuncs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", f, err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out[fd.Name.Name] = true
			}
		}
	}
	return out
}

// checkCitations checks the items of the TEST: lines of doc (project
// root root) and returns one message per bad item, with the number of
// citations checked and of placeholders seen.
func checkCitations(t *testing.T, root, doc string) (errs []string, cited int) {
	t.Helper()
	items, lines := testCitations(doc)
	funcs := map[string]map[string]bool{}
	for i, it := range items {
		m := citedTest.FindStringSubmatch(it)
		if m == nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %q is not `pkg/dir.TestName` (no placeholder is accepted)", threatModel, lines[i], it))
			continue
		}
		dir := m[1]
		if dir == "gocryptfs" {
			dir = "."
		}
		if funcs[dir] == nil {
			if _, err := os.Stat(filepath.Join(root, dir)); err != nil {
				errs = append(errs, fmt.Sprintf("%s:%d: %s: no package directory %s", threatModel, lines[i], it, dir))
				continue
			}
			funcs[dir] = topLevelFuncs(t, filepath.Join(root, dir))
		}
		if !funcs[dir][m[2]] {
			errs = append(errs, fmt.Sprintf("%s:%d: %s: no func %s in %s", threatModel, lines[i], it, m[2], dir))
		}
		cited++
	}
	return errs, cited
}

// TestThreatModelCitations: every test that docs/threat-model.md cites
// exists as a function in the cited package, so that a renamed or
// deleted test cannot leave a claim resting on nothing. No placeholder is
// accepted.
func TestThreatModelCitations(t *testing.T) {
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	errs, cited := checkCitations(t, root, readDoc(t, threatModel))
	for _, e := range errs {
		t.Error(e)
	}
	t.Logf("%d test citations checked", cited)
	// Guards the parser: a format it no longer understands must not make
	// the check pass with nothing to check.
	if cited < 50 {
		t.Errorf("only %d citations found in %s; did the TEST: format change?", cited, threatModel)
	}
}

// TestThreatModelCheck: the checker refuses a missing test, a missing
// package and any placeholder; real citations pass.
func TestThreatModelCheck(t *testing.T) {
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc := "- a.\n  TEST: `tests/docs.TestThreatModelCheck`, `gocryptfs.TestNoTestOnlyFuncs`\n" +
		"- b.\n  TEST: `tests/docs.TestNoSuchTest`, `no/such/dir.TestX`, <pending: Finding 3>\n"
	errs, cited := checkCitations(t, root, doc)
	if cited != 3 {
		t.Errorf("cited %d; want 3", cited)
	}
	want := []string{"no func TestNoSuchTest", "no package directory no/such/dir", "<pending: Finding 3>"}
	if len(errs) != len(want) {
		t.Fatalf("errors %q, want one for each of %q", errs, want)
	}
	for i, w := range want {
		if !strings.Contains(errs[i], w) {
			t.Errorf("error %d: %q lacks %q", i, errs[i], w)
		}
	}
}

// The parser of TEST: lines itself: wrapped lists, placeholders, and
// malformed items are all seen.
func TestThreatModelParser(t *testing.T) {
	doc := "The `TEST:` lines, mid-sentence, are not citations.\n  TEST: `a/b.TestX`, `c.TestY/sub`,\n  `gocryptfs.TestZ`\n- next.\n  TEST: <pending: Finding 3>\n\nTEST: TestBare\n"
	items, lines := testCitations(doc)
	want := []string{"`a/b.TestX`", "`c.TestY/sub`", "`gocryptfs.TestZ`", "<pending: Finding 3>", "TestBare"}
	if strings.Join(items, "|") != strings.Join(want, "|") {
		t.Fatalf("items %q, want %q", items, want)
	}
	if lines[0] != 2 || lines[3] != 5 || lines[4] != 7 {
		t.Errorf("lines %v", lines)
	}
	for i, ok := range []bool{true, true, true, false, false} {
		if citedTest.MatchString(items[i]) != ok {
			t.Errorf("%q: citation match %v, want %v", items[i], !ok, ok)
		}
	}
}
