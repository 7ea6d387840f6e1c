package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/readpassword"
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
