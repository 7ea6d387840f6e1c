package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoTestOnlyMembers: every exported method of a type of an internal
// package is called by code that ships (or is the method of an interface,
// so that the standard library, go-fuse or our own code calls it through
// the interface), and every exported struct field is both set and read by
// code that ships. A field that only tests set (a test knob like the
// former Args.KeepFlush) is always zero in the binary; a method or field
// that only tests read is dead weight there. Test seams live in _test.go
// files or behind -tags testhooks (see internal/fusefrontend/hooks.go).
//
// Names are matched without types (a selector .Name anywhere counts), so
// a test-only member that shares its name with a used one goes unnoticed:
// this catches the plain cases, it proves nothing.
func TestNoTestOnlyMembers(t *testing.T) {
	// Each with the reason it is set or read only outside ordinary code.
	allowed := map[string]string{
		// Called by the tests of other packages (test vectors, coretest,
		// xray's tests), so they cannot move into a _test.go file.
		"contentenc.ContentEnc.EncryptBlockNonce":        "known-answer vectors need a chosen nonce (testutil/coretest, xray tests)",
		"nametransform.NameTransform.EncryptAndHashName": "vectors and the fusefrontend name-memo tests compute expected backing names",
		"nametransform.NameTransform.IsHiddenInListing":  "tests/vectors checks the listing rule against the reference",
		"configfile.ConfFile.DecryptMasterKey":           "tests/vectors unwraps the reference's single-key configs",
	}
	files := shippingFiles(t)
	ifaces := interfaceMethods(t, files)

	type member struct{ path, kind string }
	methods := map[string]member{} // "pkg.Type.Name"
	fields := map[string]member{}
	tagged := map[string]bool{} // fields with a struct tag: encoding/json or the like sets and reads them
	structFields := map[string][]string{}
	selectors := map[string]int{} // .Name uses
	written := map[string]bool{}  // Name: set somewhere (key in a literal, assigned, address taken)
	read := map[string]bool{}     // Name: read somewhere
	for _, sf := range files {
		pkg := sf.f.Name.Name
		internal := strings.HasPrefix(sf.path, "internal/")
		for _, d := range sf.f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if internal && d.Recv != nil && d.Name.IsExported() {
					methods[pkg+"."+recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = member{sf.path, "method"}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							structFields[ts.Name.Name] = append(structFields[ts.Name.Name], n.Name)
							if internal && n.IsExported() {
								key := pkg + "." + ts.Name.Name + "." + n.Name
								fields[key] = member{sf.path, "field"}
								tagged[key] = fl.Tag != nil
							}
						}
					}
				}
			}
		}
		// Selectors on the left of an assignment, incremented or whose
		// address is taken are written; every other selector is read.
		lhs := map[*ast.SelectorExpr]bool{}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				for _, e := range x.Lhs {
					if sel, ok := e.(*ast.SelectorExpr); ok {
						lhs[sel] = true
						written[sel.Sel.Name] = true
						if x.Tok != token.ASSIGN && x.Tok != token.DEFINE {
							read[sel.Sel.Name] = true // x.F += 1
						}
					}
				}
			case *ast.IncDecStmt:
				if sel, ok := x.X.(*ast.SelectorExpr); ok {
					written[sel.Sel.Name], read[sel.Sel.Name] = true, true
				}
			case *ast.UnaryExpr:
				if sel, ok := x.X.(*ast.SelectorExpr); ok && x.Op == token.AND {
					written[sel.Sel.Name], read[sel.Sel.Name] = true, true
				}
			case *ast.CompositeLit:
				positional := false
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok {
							written[id.Name] = true
						}
					} else {
						positional = true
					}
				}
				if positional {
					for _, name := range structFields[typeName(x.Type)] {
						written[name] = true
					}
				}
			case *ast.SelectorExpr:
				selectors[x.Sel.Name]++
				if !lhs[x] {
					read[x.Sel.Name] = true
				}
			}
			return true
		})
	}
	for key, m := range methods {
		name := key[strings.LastIndex(key, ".")+1:]
		if selectors[name] == 0 && !ifaces[name] && allowed[key] == "" {
			t.Errorf("method %s (%s) is called by tests only: move it into a _test.go file or behind -tags testhooks", key, m.path)
		}
	}
	for key, m := range fields {
		name := key[strings.LastIndex(key, ".")+1:]
		if tagged[key] || allowed[key] != "" {
			continue
		}
		if !written[name] {
			t.Errorf("field %s (%s) is never set by code that ships (a test knob?): move the knob into the tests", key, m.path)
		}
		if !read[name] {
			t.Errorf("field %s (%s) is never read by code that ships", key, m.path)
		}
	}
}

// recvName is the type name of a method receiver (T, *T, T[P]).
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// typeName is the bare name of a composite literal's type, "" if none.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// interfaceMethods returns the method names of every interface type that
// code which ships may call our methods through: those declared in our
// own code, in go-fuse, and in the standard library packages whose
// interfaces we implement.
func interfaceMethods(t *testing.T, files []shipFile) map[string]bool {
	t.Helper()
	names := map[string]bool{"Error": true} // the builtin error
	collect := func(f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if it, ok := n.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					for _, n := range m.Names {
						names[n.Name] = true
					}
				}
			}
			return true
		})
	}
	for _, sf := range files {
		collect(sf.f)
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}",
		"github.com/hanwen/go-fuse/v2/fs", "github.com/hanwen/go-fuse/v2/fuse",
		"io", "io/fs", "fmt", "sort", "flag", "encoding", "encoding/json", "log/slog",
		"context", "hash", "errors", "crypto", "crypto/cipher", "container/heap", "os").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dir := range strings.Fields(string(out)) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			collect(f)
		}
	}
	return names
}

// TestNoTestNamesShip: nothing that ships under internal/ declares a name
// beginning with "test" (a testHook field, a testFail function, a
// TestMode flag): test seams live in _test.go files or in files built only
// with a test tag (internal/fusefrontend/hooks_testhooks.go). The one
// exception is the type testHooks, which must be an empty struct in the
// release build.
func TestNoTestNamesShip(t *testing.T) {
	for _, sf := range shippingFiles(t) {
		if !strings.HasPrefix(sf.path, "internal/") {
			continue
		}
		check := func(id *ast.Ident) {
			if id != nil && strings.HasPrefix(strings.ToLower(id.Name), "test") {
				t.Errorf("%s: %s ships in the binary: move it into a _test.go file or behind -tags testhooks", sf.path, id.Name)
			}
		}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				check(x.Name)
			case *ast.ValueSpec:
				for _, id := range x.Names {
					check(id)
				}
			case *ast.TypeSpec:
				if x.Name.Name == "testHooks" {
					if st, ok := x.Type.(*ast.StructType); !ok || len(st.Fields.List) != 0 {
						t.Errorf("%s: testHooks must be an empty struct in the release build", sf.path)
					}
					return false
				}
				check(x.Name)
			case *ast.Field:
				for _, id := range x.Names {
					check(id)
				}
			}
			return true
		})
	}
}
