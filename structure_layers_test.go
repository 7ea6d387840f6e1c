package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayerImports: a package reaches a lower layer through the package
// that owns the concept, not by skipping to the one that implements it
// (issue 22, "one concept, one place"). Each entry is a package directory,
// an import its non-test files must not have, and where the concept lives
// instead.
func TestLayerImports(t *testing.T) {
	for _, c := range []struct{ dir, forbidden, instead string }{
		{".", "gocryptfs/internal/stupidgcm", "cryptocore.BackendOpenSSL.Available says whether OpenSSL is built in"},
		{"internal/contentenc", "gocryptfs/internal/stupidgcm", "cryptocore.BatchAEAD and cryptocore.BatchError are the batch contracts"},
		{"internal/ctlsock", "gocryptfs/internal/nametransform", "an undecryptable name is an error with Undecryptable() true (ctlsock.Translator)"},
	} {
		for _, path := range nonTestGoFiles(t, c.dir) {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == c.forbidden {
					t.Errorf("%s imports %s: %s", path, p, c.instead)
				}
			}
		}
	}
}

// nonTestGoFiles lists the Go files of the package in dir (not below
// it) that are not tests, whatever their build tags.
func nonTestGoFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// TestOneHelper: a helper that packages used to declare each for itself
// is declared in one place, or nowhere when the standard library has it.
// The map is function name → the one package directory allowed to
// declare it ("" for none), with the reason.
func TestOneHelper(t *testing.T) {
	owners := map[string]struct{ dir, why string }{
		"sliceForAppend": {"", "slices.Grow(dst, n)[:len(dst)+n] does it"},
	}
	for _, sf := range shippingFiles(t) {
		for _, d := range sf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			if o, ok := owners[fd.Name.Name]; ok && filepath.Dir(sf.path) != o.dir {
				t.Errorf("%s declares %s: %s", sf.path, fd.Name.Name, o.why)
			}
		}
	}
}

// TestMountTableOnlyInMountinfo: what lies below CIPHERDIR (the mount
// table, the filesystem type) is answered by package mountinfo alone. No
// other Go file that is not a test (test helpers included) reads
// /proc/self/mountinfo, undoes its octal escapes (\040 is a space) or
// holds a filesystem magic number: neither a statfs constant of
// x/sys/unix or syscall (..._MAGIC) nor a constant or variable of its own
// named after one.
func TestMountTableOnlyInMountinfo(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(path, "internal/mountinfo/") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind != token.STRING {
					break
				}
				if strings.Contains(x.Value, "/proc/self/mountinfo") {
					t.Errorf("%s reads /proc/self/mountinfo: use mountinfo.Read", path)
				}
				if strings.Contains(x.Value, `\040`) {
					t.Errorf("%s undoes the mount table's escapes: use mountinfo.Unescape", path)
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && (id.Name == "unix" || id.Name == "syscall") && strings.HasSuffix(x.Sel.Name, "_MAGIC") {
					t.Errorf("%s uses %s.%s: ask mountinfo (CloseIsNoop, IsFUSE, Detect) about filesystem types", path, id.Name, x.Sel.Name)
				}
			case *ast.ValueSpec:
				for _, id := range x.Names {
					if strings.Contains(strings.ToLower(id.Name), "magic") {
						t.Errorf("%s declares %s: filesystem magic numbers live in mountinfo", path, id.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
