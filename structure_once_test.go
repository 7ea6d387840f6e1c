package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The rules of this file keep each concept in one place (issue "One
// concept, one place"): a second copy of the code that builds the ciphers
// of a filesystem or maps its feature flags would drift from the first, as
// the copy in internal/testutil/coretest did.

// pkgDir is the package directory of a repository path, "." for the root.
func pkgDir(path string) string { return filepath.ToSlash(filepath.Dir(path)) }

// calledAs returns "pkg.Name" for a call of an imported function
// (pkg.Name(...)) and ".Name" for a method call (x.Name(...)). Names are
// matched without types: a function of another package imported under
// the same name, or a method of the same name, counts too.
func calledAs(call *ast.CallExpr, imported map[string]bool) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if id, ok := sel.X.(*ast.Ident); ok && imported[id.Name] {
		return id.Name + "." + sel.Sel.Name
	}
	return "." + sel.Sel.Name
}

// importNames are the names under which f imports packages.
func importNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	return names
}

// TestCoreBuiltOnlyInFscore: the CryptoCore, NameTransform and ContentEnc
// of a filesystem are put together by internal/fscore alone, for the
// binary and for the tests (internal/testutil/coretest uses it), so that
// the tests run on a core built like the binary builds it. The packages'
// own tests, which test New itself, are _test.go files and not ruled.
func TestCoreBuiltOnlyInFscore(t *testing.T) {
	ruled := map[string]bool{"cryptocore.New": true, "nametransform.New": true, "contentenc.New": true}
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		imported := importNames(f)
		ast.Inspect(f, func(nd ast.Node) bool {
			if call, ok := nd.(*ast.CallExpr); ok && ruled[calledAs(call, imported)] {
				n++
				if pkgDir(path) != "internal/fscore" {
					t.Errorf("%s calls %s: build the format core with fscore.New", path, calledAs(call, imported))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ruled) {
		t.Errorf("found %d calls of %d constructors: does the rule still match fscore.New?", n, len(ruled))
	}
}

// TestFeatureFlagsReadInConfigfile: which ciphers and name encryption a
// config's feature flags select is read in configfile alone
// (ConfFile.Features); the command line and the tests use that.
func TestFeatureFlagsReadInConfigfile(t *testing.T) {
	// Flags that code outside configfile may name, with the reason.
	allowed := map[string]string{
		"configfile.FlagKeySlots": "says whether the reference can read slot 0 (key-slot commands warn), not a filesystem parameter",
	}
	for _, sf := range shippingFiles(t) {
		if pkgDir(sf.path) == "internal/configfile" {
			continue
		}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || id.Name != "configfile" || !strings.HasPrefix(sel.Sel.Name, "Flag") {
				return true
			}
			if name := "configfile." + sel.Sel.Name; allowed[name] == "" {
				t.Errorf("%s reads %s: take the filesystem's parameters from ConfFile.Features", sf.path, name)
			}
			return true
		})
	}
}
