package fsck

import (
	"strings"
	"testing"
)

// TestKindNames: every kind, including any added later (numKinds follows
// the last), has its own -json name and its own line format, so none is
// printed as "kind-N" or as the generic "problem N" line.
func TestKindNames(t *testing.T) {
	seen := map[string]Kind{}
	for k := range numKinds {
		name := k.String()
		if kindNames[k] == "" || strings.HasPrefix(name, "kind-") {
			t.Errorf("kind %d has no -json name in kindNames", int(k))
			continue
		}
		if other, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d share the -json name %q", int(other), int(k), name)
		}
		seen[name] = k
		if line := (Problem{Kind: k, Path: "p"}).String(); strings.HasPrefix(line, "fsck: problem ") {
			t.Errorf("kind %d (%s): generic line %q", int(k), name, line)
		}
	}
}
