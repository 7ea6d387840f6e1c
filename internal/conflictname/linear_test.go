package conflictname

import (
	"slices"
	"strings"
	"testing"
)

// parseQuadratic is the parser before it was made linear, kept as the
// reference for the differential test and the fuzz target and to show
// that TestParseLinear catches quadratic work: for each tool it tried
// every dot as the marker's end and every earlier byte as its start.
// work counts the bytes handed to the regular expressions, like parse.
func parseQuadratic(name string) (out []Candidate, work int) {
	for _, t := range tools {
		re := markerRE[t]
		first := markerFirstByte(t)
		for end := len(name); end > 0; end = strings.LastIndexByte(name[:end], '.') {
			for start := 0; start < end; start++ {
				if !strings.ContainsRune(first, rune(name[start])) {
					continue
				}
				text := name[start:end]
				work += len(text)
				if !re.MatchString(text) {
					continue
				}
				base := name[:start] + name[end:]
				m := Marker{Tool: t, Text: text}
				if base == "" || m.Apply(base) != name {
					continue
				}
				out = append(out, Candidate{Base: base, Marker: m})
			}
		}
	}
	return out, work
}

// sameCandidates reports whether a and b hold the same readings (as sets;
// the old parser could report one reading twice).
func sameCandidates(a, b []Candidate) bool {
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	for _, c := range b {
		if !slices.Contains(a, c) {
			return false
		}
	}
	return true
}

// hostileNames returns names of length n built to make a naive parser try
// many marker positions: runs of every byte a marker starts or ends with,
// and of marker fragments.
func hostileNames(n int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, n/len(s)+1)[:n] }
	return map[string]string{
		"dots":         rep("."),
		"spaces":       rep(" "),
		"parens":       rep("("),
		"space-paren":  rep(" ("),
		"hyphens":      rep("-"),
		"onedrive":     rep("-A"),
		"underscores":  rep("_"),
		"dot-space":    rep(". ("),
		"syncthing":    rep(".sync-conflict-20261202-120000-ABCDEFG"),
		"nextcloud":    rep(" (conflicted copy 2026-12-02 120000)."),
		"dropbox":      rep(" (Bob's conflicted copy 2026-12-02 (2))."),
		"dotted-names": rep("a.b (1)"),
	}
}

// workBound is the most work parse may do on a name of n bytes: per end
// (two) and tool, a constant number of tries, only the parenthesised
// markers (at most four tries per end) reading up to n bytes.
func workBound(n int) int { return 8*n + 2*(syncthingLen+oldOwnCloudLen+15*oneDriveMaxLen) }

// TestParseLinear: the parser's work on hostile names grows linearly with
// their length. It counts the bytes handed to the regular expressions
// instead of timing anything; the old quadratic parser, run on the same
// names, must exceed the bound, which shows that the test can fail.
func TestParseLinear(t *testing.T) {
	for _, n := range []int{255, 4096} {
		for shape, name := range hostileNames(n) {
			got, work := parse(name)
			if bound := workBound(n); work > bound {
				t.Errorf("%s, %d bytes: work %d, above the linear bound %d", shape, n, work, bound)
			}
			old, _ := parseQuadratic(name)
			if !sameCandidates(got, old) {
				t.Errorf("%s, %d bytes: readings %+v, the old parser gave %+v", shape, n, got, old)
			}
		}
	}
	if _, work := parseQuadratic(strings.Repeat(".", 255)); work <= workBound(255) {
		t.Errorf("the quadratic parser's work %d on 255 dots is within the bound %d: the bound cannot catch it", work, workBound(255))
	}
}

// TestParseNoAllocs: a name that is no conflict copy costs no allocation
// (it is parsed on every lookup of a missing name).
func TestParseNoAllocs(t *testing.T) {
	for shape, name := range hostileNames(255) {
		if allocs := testing.AllocsPerRun(10, func() { Parse(name) }); allocs != 0 && len(Parse(name)) == 0 {
			t.Errorf("%s: %v allocations for a name without readings", shape, allocs)
		}
	}
}

// TestParseMatchesQuadratic: on names built from every marker and on the
// tests' names, the linear parser gives the same readings as the old one.
func TestParseMatchesQuadratic(t *testing.T) {
	markers := []Marker{{Syncthing, stMark}, {Nextcloud, ncMark}, {Nextcloud, ocMark}, {Dropbox, dbMark},
		{Dropbox, " (Bob's conflicted copy 2026-12-02 (2))"}, {OneDrive, odMark}, {OneDrive, "-A"}, {Numbered, nbMark}}
	bases := []string{"a", "a.b", "a.b.c", ".x", ".x.y", cipher, long, "x-Y", "a (1)", "b (c)", "(", "x.", "..", "gocryptfs.diriv", "a-B.c"}
	var names []string
	for _, b := range bases {
		names = append(names, b)
		for _, m := range markers {
			once := m.Apply(b)
			names = append(names, once)
			for _, m2 := range markers {
				names = append(names, m2.Apply(once))
			}
		}
	}
	for _, name := range names {
		got, _ := parse(name)
		old, _ := parseQuadratic(name)
		if !sameCandidates(got, old) {
			t.Errorf("Parse(%q) = %+v, the old parser gave %+v", name, got, old)
		}
	}
}

// FuzzConflictName: Parse never panics, every reading applies back to
// the name with a valid marker and a non-empty base, no reading appears
// twice, the work stays within the linear bound, and the readings are
// those of the old exhaustive parser.
func FuzzConflictName(f *testing.F) {
	for _, s := range []string{"report" + stMark + ".txt", "gocryptfs" + stMark + ".diriv", "x-Y-Z", "doc (Bob's conflicted copy 2026-12-02 (2)).odt",
		"mydata (conflicted copy 2018-04-10 093612).txt", "IMG (12).jpg", cipher + ocMark, strings.Repeat(".", 255), "", ".", "a (1) (2).b.c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, work := parse(name)
		if bound := workBound(len(name)); work > bound {
			t.Fatalf("work %d on %d bytes, above %d", work, len(name), bound)
		}
		for i, c := range got {
			if c.Base == "" || !c.Marker.Valid() || c.Marker.Apply(c.Base) != name {
				t.Fatalf("bad reading %+v of %q", c, name)
			}
			if slices.Contains(got[:i], c) {
				t.Fatalf("reading %+v twice", c)
			}
		}
		if len(name) > 300 {
			return // longer than any file name; the reference is too slow
		}
		if old, _ := parseQuadratic(name); !sameCandidates(got, old) {
			t.Fatalf("Parse(%q) = %+v, the old parser gave %+v", name, got, old)
		}
	})
}

// BenchmarkParse compares the linear parser with the old one on a name
// of 255 dots (the worst case reported) and on a Syncthing copy.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct{ what, name string }{{"dots255", strings.Repeat(".", 255)}, {"syncthing", "report" + stMark + ".txt"}} {
		b.Run("linear/"+c.what, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parse(c.name)
			}
		})
		b.Run("quadratic/"+c.what, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parseQuadratic(c.name)
			}
		})
	}
}
