package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/readpassword"
	"gocryptfs/internal/unlock"
)

// TestExitCodesOnlyInMain: exit codes are decided in package main alone;
// no other package's non-test code imports exitcodes (they return sentinel
// errors that withExitCode maps).
func TestExitCodesOnlyInMain(t *testing.T) {
	goFiles(t, parser.ImportsOnly, func(path string, f *ast.File) {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "gocryptfs/internal/exitcodes" {
				t.Errorf("%s imports exitcodes; return a sentinel error and map it in main", path)
			}
		}
	}, "exitcodes")
}

// TestFlagParsingInCliflags: the command line of gocryptfs is parsed by
// internal/cliflags alone; package main holds the flag table, not a
// parser (no loop over arguments looking for dashes).
func TestFlagParsingInCliflags(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "flag" {
				t.Errorf("%s imports flag; gocryptfs's command line goes through internal/cliflags", path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && (lit.Value == `"--"` || lit.Value == `"-o"`) {
				t.Errorf("%s: %s at %v: parsing the command line is internal/cliflags' job", path, lit.Value, lit.Pos())
			}
			return true
		})
	}
}

// TestStructuredLogs: log records of the internal packages carry their
// variable parts as attributes (slog's "key", value pairs), so that -d
// output and syslog can be filtered by field; a message is a constant
// text. Package main and readpassword keep formatted messages where they
// print the reference's text to the terminal (scripts and users read
// those lines whole).
func TestStructuredLogs(t *testing.T) {
	allowed := map[string]string{
		"internal/readpassword/readpassword.go": "the reference's prompts and notices on the terminal",
	}
	goFiles(t, 0, func(path string, f *ast.File) {
		if allowed[filepath.ToSlash(path)] != "" {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !slices.Contains([]string{"Debug", "Info", "Warn", "Error"}, sel.Sel.Name) {
				return true
			}
			if inner, ok := call.Args[0].(*ast.CallExpr); ok {
				if fn, ok := inner.Fun.(*ast.SelectorExpr); ok {
					if x, ok := fn.X.(*ast.Ident); ok && x.Name == "fmt" {
						t.Errorf("%s: %s(fmt.%s(...)): log a constant message with attributes", path, sel.Sel.Name, fn.Sel.Name)
					}
				}
			}
			return true
		})
	})
}

// goFiles calls fn for every non-test Go file below internal/ except those
// of the package directories in skip.
func goFiles(t *testing.T, mode parser.Mode, fn func(path string, f *ast.File), skip ...string) {
	t.Helper()
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		for _, s := range skip {
			if filepath.Dir(path) == filepath.Join("internal", s) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, mode)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEINTROnlyInSyscallcompat: the EINTR-safe system call helpers live in
// syscallcompat alone; no other package has its own retry loop.
func TestEINTROnlyInSyscallcompat(t *testing.T) {
	goFiles(t, 0, func(path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "EINTR" {
				t.Errorf("%s: handles EINTR itself; use the syscallcompat helpers", path)
			}
			return true
		})
	}, "syscallcompat")
}

// shipFile is a parsed Go file of the code that ships: not a _test.go
// file, not built only with a tag that no release build sets (such as
// testhooks), not in tests/ or a test helper package.
type shipFile struct {
	path string
	f    *ast.File
}

// shippingFiles parses every Go file of the repository that ships.
func shippingFiles(t *testing.T) []shipFile {
	t.Helper()
	var files []shipFile
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		for _, s := range []string{"internal/testutil/", "internal/benchutil/", "tests/"} {
			if strings.HasPrefix(path, s) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if !ships(f) {
			return nil
		}
		files = append(files, shipFile{path, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// releaseTags are the build tags of the release builds (build.bash, the
// without_openssl build, CGO_ENABLED=0), beside the platform's.
var releaseTags = [][]string{{"cgo"}, {"cgo", "without_openssl"}, {}}

// ships reports whether f is compiled into some release build: its
// //go:build line, if any, holds with the tags of one of releaseTags (on
// linux). Files for test-only tags (testhooks, race) do not ship.
func ships(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				continue // not a build line
			}
			for _, tags := range releaseTags {
				if expr.Eval(func(tag string) bool {
					return tag == "linux" || tag == "unix" || tag == "gc" || tag == runtime.GOARCH ||
						strings.HasPrefix(tag, "go1.") || slices.Contains(tags, tag)
				}) {
					return true
				}
			}
			return false
		}
	}
	return true
}

// TestNoTestOnlyFuncs: every exported top-level function of an internal
// package (test helper packages aside) is used by code that ships; what
// only tests use lives in _test.go files.
func TestNoTestOnlyFuncs(t *testing.T) {
	// Test-only here on purpose: a tiny logger constructor many packages'
	// tests share, the flag list the config tests iterate over, and a size
	// helper that the fsck -repair work uses.
	allowed := map[string]bool{"tlog.Discard": true, "configfile.KnownFlags": true, "contentenc.BlockNoToPlainOff": true}
	decl := map[string]string{}
	uses := map[string]int{}
	for _, sf := range shippingFiles(t) {
		path, f := sf.path, sf.f
		pkg := f.Name.Name
		for _, dcl := range f.Decls {
			if fd, ok := dcl.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() && strings.HasPrefix(path, "internal/") {
				decl[pkg+"."+fd.Name.Name] = path
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					uses[id.Name+"."+x.Sel.Name]++
				}
			case *ast.Ident:
				uses[pkg+"."+x.Name]++
			}
			return true
		})
	}
	for name, path := range decl {
		// The declaration itself counts once.
		if uses[name] <= 1 && !allowed[name] {
			t.Errorf("%s (%s) is used by tests only: move it into a _test.go file", name, path)
		}
	}
}

// TestMountFunctionsShort: validate, doMount and unlock used to be 60 to
// 110 lines each; they stay split into steps that fit on a screen.
func TestMountFunctionsShort(t *testing.T) {
	const maxLines = 50
	fset := token.NewFileSet()
	for _, file := range []string{"cli_args.go", "mount.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line; n > maxLines && fd.Name.Name != "newFlagSet" {
				t.Errorf("%s: %s has %d lines, more than %d", file, fd.Name.Name, n, maxLines)
			}
		}
	}
}

// TestWithExitCode: the sentinel errors of the internal packages get their
// exit codes in main; an error that has a code keeps it.
func TestWithExitCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, exitcodes.Success},
		{fmt.Errorf("x: %w", readpassword.ErrPassword), exitcodes.ReadPassword},
		{fmt.Errorf("x: %w", readpassword.ErrMasterKey), exitcodes.MasterKey},
		{exitcodes.New(exitcodes.Usage, readpassword.ErrPassword), exitcodes.Usage},
		{errors.New("other"), exitcodes.Other},
		// The kinds of package unlock and fscore (docs/cli.md 3.5, 7).
		{fmt.Errorf("x: %w", unlock.ErrConfig), exitcodes.Other},
		{fmt.Errorf("x: %w", unlock.ErrConfigRefused), exitcodes.DeprecatedFS},
		{fmt.Errorf("x: %w", unlock.ErrNoSlot), exitcodes.Usage},
		{fmt.Errorf("x: %w", unlock.ErrSecret), exitcodes.ReadPassword},
		{fmt.Errorf("x: %w", unlock.ErrWrongSecret), exitcodes.PasswordIncorrect},
		{fmt.Errorf("x: %w", unlock.ErrKDF), exitcodes.ScryptParams},
		{fmt.Errorf("x: %w", unlock.ErrFIDO2), exitcodes.FIDO2Error},
		{fmt.Errorf("x: %w", fscore.ErrCiphers), exitcodes.Usage},
		{fmt.Errorf("x: %w", fscore.ErrNames), exitcodes.Usage},
		{fmt.Errorf("x: %w", fscore.ErrContent), exitcodes.Other},
	}
	for _, c := range cases {
		if got := exitcodes.From(withExitCode(c.err)); got != c.want {
			t.Errorf("%v: exit code %d, want %d", c.err, got, c.want)
		}
	}
	if _, err := readpassword.ParseMasterKey("zz"); exitcodes.From(withExitCode(err)) != exitcodes.MasterKey {
		t.Errorf("bad -masterkey: %v", err)
	}
}
