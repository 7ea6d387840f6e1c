package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The rules of this file keep each concept in one place (issue "One
// concept, one place"): a second copy of the code that unlocks a
// filesystem, builds its ciphers, maps its feature flags or defines exit
// codes would drift from the first, as the copies in gocryptfs-xray and
// internal/testutil/coretest did.

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

// TestUnlockOnlyInUnlockPackage: opening a key slot (the master key from a
// password, key file or FIDO2 token), reading -masterkey, asking a FIDO2
// token for a credential or a secret, and loading a config for unlocking
// happen in internal/unlock alone, which both binaries use; they once had
// a copy each, and xray's lacked -keyfile. configfile defines the slot
// decryption and uses it itself.
func TestUnlockOnlyInUnlockPackage(t *testing.T) {
	only := map[string][]string{
		".UnlockWith":                 {"internal/unlock", "internal/configfile"},
		"configfile.LoadRaw":          {"internal/unlock"},
		"fido2.Register":              {"internal/unlock"},
		"fido2.Secret":                {"internal/unlock"},
		"readpassword.ParseMasterKey": {"internal/unlock"},
		".MasterKeyFromStdin":         {"internal/unlock"},
	}
	seen := map[string]bool{}
	for _, sf := range shippingFiles(t) {
		imported := importNames(sf.f)
		ast.Inspect(sf.f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := calledAs(call, imported)
			dirs, ruled := only[name]
			if !ruled {
				return true
			}
			seen[name] = true
			for _, d := range dirs {
				if pkgDir(sf.path) == d {
					return true
				}
			}
			t.Errorf("%s calls %s: unlocking belongs to internal/unlock (its Open, LoadConfig, MasterKey, NewFIDO2Secret, SlotTaken)", sf.path, name)
			return true
		})
	}
	for name := range only {
		if !seen[name] {
			t.Errorf("no code calls %s any more: remove it from this rule (or the rule matches nothing)", name)
		}
	}
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

// TestExitCodesDefinedInExitcodes: the numbers of the exit codes are
// defined in internal/exitcodes alone, which both binaries use
// (gocryptfs-xray once had its own list).
func TestExitCodesDefinedInExitcodes(t *testing.T) {
	exitName := regexp.MustCompile(`^(?i)exit`)
	for _, sf := range shippingFiles(t) {
		if pkgDir(sf.path) == "internal/exitcodes" {
			continue
		}
		for _, d := range sf.f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if exitName.MatchString(name.Name) {
						t.Errorf("%s defines the constant %s: use the exit codes of internal/exitcodes", sf.path, name.Name)
					}
				}
			}
		}
	}
}

// TestMessagesWrittenOnce: the user-facing sentences of unlocking are
// written in one place each, so that both binaries and all actions say
// the same (the "custom location" notice was once written three times).
func TestMessagesWrittenOnce(t *testing.T) {
	messages := []string{
		"Using config file at custom location",
		"Masterkey encrypted using FIDO2 token",
		"does not unlock any slot",
		"Password incorrect.",
		"Cannot open config file",
		"Decrypting master key",
	}
	count := map[string][]string{}
	for _, sf := range shippingFiles(t) {
		ast.Inspect(sf.f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for _, m := range messages {
				if strings.Contains(lit.Value, m) {
					count[m] = append(count[m], sf.path)
				}
			}
			return true
		})
	}
	for _, m := range messages {
		if len(count[m]) != 1 {
			t.Errorf("%q is written %d times (%v); write it once and share the code that says it", m, len(count[m]), count[m])
		}
	}
}
