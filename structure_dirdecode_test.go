package main

import (
	"go/ast"
	"strings"
	"testing"
)

// TestDirDecodingOnlyInNametransform holds the rule "a directory listing
// is decoded in one place": nametransform.DecodeDir says what the
// plaintext view of a backing directory holds (the filesystem's own
// files, names under the main IV, conflict copies and alternative IVs,
// -badname, undecryptable names), and the mount, -fsck and -fsck -repair
// all use it, so that they cannot disagree on a name. Outside
// nametransform, code that ships
//   - never classifies a backing name itself (Classify,
//     IsHiddenInListing; NameEntries and DecodeDir do), and
//   - never decrypts names in a function that lists a directory
//     (syscallcompat.Getdents next to DecryptName or DecryptNameAt):
//     that is a second decoder of a listing.
//
// Decrypting one path's components (DecryptPath), or names a journal
// recorded, lists nothing and stays allowed.
func TestDirDecodingOnlyInNametransform(t *testing.T) {
	classify := map[string]bool{"Classify": true, "IsHiddenInListing": true}
	decrypt := map[string]bool{"DecryptName": true, "DecryptNameAt": true}
	for _, sf := range shippingFiles(t) {
		if strings.HasPrefix(sf.path, "internal/nametransform/") {
			continue
		}
		for _, d := range sf.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lists, decrypts := false, ""
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch name := sel.Sel.Name; {
				case classify[name]:
					t.Errorf("%s: %s calls %s: classify backing names with nametransform.DecodeDir (or NameEntries)", sf.path, fn.Name.Name, name)
				case decrypt[name]:
					decrypts = name
				case name == "Getdents":
					lists = true
				}
				return true
			})
			if lists && decrypts != "" {
				t.Errorf("%s: %s lists a directory and calls %s: decode the listing with nametransform.DecodeDir", sf.path, fn.Name.Name, decrypts)
			}
		}
	}
}
