package repair

import (
	"strings"
	"testing"

	"gocryptfs/internal/fsck"
)

// TestKindNames: every fsck kind, including any added later, has its own
// -json name, and Describe never falls back to a numbered "kind-N".
func TestKindNames(t *testing.T) {
	seen := map[string]fsck.Kind{}
	for _, k := range fsck.Kinds() {
		name := kindNames[k]
		if name == "" {
			t.Errorf("fsck kind %d has no -json name in kindNames", int(k))
			continue
		}
		if other, dup := seen[name]; dup {
			t.Errorf("fsck kinds %d and %d share the -json name %q", int(other), int(k), name)
		}
		seen[name] = k
		if e := Describe(-1, nil, fsck.Problem{Kind: k}); e.Kind == "" || strings.HasPrefix(e.Kind, "kind-") {
			t.Errorf("Describe(kind %d).Kind = %q", int(k), e.Kind)
		}
	}
	if len(kindNames) != len(fsck.Kinds()) {
		t.Errorf("kindNames has %d entries for %d kinds", len(kindNames), len(fsck.Kinds()))
	}
}
