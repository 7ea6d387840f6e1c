package conflictname

import (
	"strings"
	"testing"
)

const (
	stMark = ".sync-conflict-20261202-120000-ABCDEFG"
	ncMark = " (conflicted copy 2026-12-02 120000)"
	ocMark = "_conflict-20261202-120000"
	dbMark = " (Bob's conflicted copy 2026-12-02)"
	odMark = "-DESKTOP-AB12"
	nbMark = " (1)"
	// cipher is a base64url encrypted name (no dot).
	cipher = "Vp5mZ-Aq_3kQq1LWc2bcNA"
	long   = "gocryptfs.longname.oOx8mTQ2Rqzk3GgvT0jQhgYUusBHfl8Dk6Cjf5vZ2dA"
)

// TestApply checks each tool's placement of the marker against examples
// from the tools' documentation and rules.
func TestApply(t *testing.T) {
	cases := []struct {
		m          Marker
		name, want string
	}{
		{Marker{Syncthing, stMark}, "report.txt", "report" + stMark + ".txt"},
		{Marker{Syncthing, stMark}, "a.tar.gz", "a.tar" + stMark + ".gz"},
		{Marker{Syncthing, stMark}, "noext", "noext" + stMark},
		// filepath.Ext(".bashrc") is ".bashrc": the stem is empty.
		{Marker{Syncthing, stMark}, ".bashrc", stMark + ".bashrc"},
		{Marker{Syncthing, stMark}, cipher, cipher + stMark},
		{Marker{Syncthing, stMark}, long, "gocryptfs.longname" + stMark + long[len("gocryptfs.longname"):]},
		{Marker{Syncthing, stMark}, "gocryptfs.diriv", "gocryptfs" + stMark + ".diriv"},
		{Marker{Nextcloud, ncMark}, "mydata.txt", "mydata" + ncMark + ".txt"},
		{Marker{Nextcloud, ncMark}, ".bashrc", ".bashrc" + ncMark},
		{Marker{Nextcloud, ocMark}, "mydata.txt", "mydata" + ocMark + ".txt"},
		{Marker{Nextcloud, ncMark}, cipher, cipher + ncMark},
		{Marker{Dropbox, dbMark}, "doc.docx", "doc" + dbMark + ".docx"},
		{Marker{OneDrive, odMark}, "doc.docx", "doc" + odMark + ".docx"},
		{Marker{Numbered, nbMark}, "IMG_1.jpg", "IMG_1" + nbMark + ".jpg"},
		{Marker{Numbered, nbMark}, cipher, cipher + nbMark},
	}
	for _, c := range cases {
		if got := c.m.Apply(c.name); got != c.want {
			t.Errorf("%v.Apply(%q) = %q, want %q", c.m, c.name, got, c.want)
		}
		if !c.m.Valid() {
			t.Errorf("%v not valid", c.m)
		}
		// And back: Parse must find exactly this reading among others.
		found := false
		for _, cand := range Parse(c.want) {
			if cand.Base == c.name && cand.Marker == c.m {
				found = true
			}
			if cand.Marker.Apply(cand.Base) != c.want {
				t.Errorf("Parse(%q) gave %+v, which does not apply back", c.want, cand)
			}
		}
		if !found {
			t.Errorf("Parse(%q) = %+v, missing {%q %v}", c.want, Parse(c.want), c.name, c.m)
		}
	}
}

// TestParseExact checks the first reading (the most specific marker; a
// Syncthing marker also reads as a OneDrive one at its hyphens).
func TestParseExact(t *testing.T) {
	cases := map[string]Candidate{
		"report" + stMark + ".txt":                       {"report.txt", Marker{Syncthing, stMark}},
		cipher + stMark:                                  {cipher, Marker{Syncthing, stMark}},
		"gocryptfs" + stMark + ".diriv":                  {"gocryptfs.diriv", Marker{Syncthing, stMark}},
		"mydata (conflicted copy 2018-04-10 093612).txt": {"mydata.txt", Marker{Nextcloud, " (conflicted copy 2018-04-10 093612)"}},
		"f (conflicted copy alice 2018-04-10 093612)":    {"f", Marker{Nextcloud, " (conflicted copy alice 2018-04-10 093612)"}},
		"doc (Bob's conflicted copy 2026-12-02 (2)).odt": {"doc.odt", Marker{Dropbox, " (Bob's conflicted copy 2026-12-02 (2))"}},
		"doc (Bob's conflicted copy 2026-12-02 3).odt":   {"doc.odt", Marker{Dropbox, " (Bob's conflicted copy 2026-12-02 3)"}},
		"IMG (12).jpg":                                   {"IMG.jpg", Marker{Numbered, " (12)"}},
	}
	for name, want := range cases {
		got := Parse(name)
		if len(got) == 0 || got[0] != want {
			t.Errorf("Parse(%q) = %+v, want [%+v ...]", name, got, want)
		}
	}
}

// TestParseAmbiguous: OneDrive computer names contain hyphens, so every
// hyphen gives a reading; base64url names contain hyphens too.
func TestParseAmbiguous(t *testing.T) {
	got := Parse("x-Y-Z")
	want := map[string]string{"x-Y": "-Z", "x": "-Y-Z"}
	if len(got) != len(want) {
		t.Fatalf("Parse(x-y-z) = %+v", got)
	}
	for _, c := range got {
		if c.Marker.Tool != OneDrive || want[c.Base] != c.Marker.Text {
			t.Errorf("unexpected reading %+v", c)
		}
	}
}

// TestParseNotTouched lists names that no rule may read as conflict copies.
func TestParseNotTouched(t *testing.T) {
	for _, name := range []string{
		"", "report.txt", "a", ".bashrc", cipher[:5] + "." + "x",
		"gocryptfs.diriv", "gocryptfs.conf", long, long + ".name",
		"x.sync-conflict-2026120-120000-ABCDEFG",       // date too short
		"x.sync-conflict-20261202-120000-abcdefg",      // lower-case device id
		"x.sync-conflict-20261202-120000-ABCDEFGH",     // device id too long
		".sync-conflict-20261202_120000_ABCDEFG",       // empty base
		"a (conflicted copy 2026-12-02).txt",           // Nextcloud needs a time
		"a (conflicted copy 2026-12-02 120000).txt.gz", // marker not before the extension
		"a (Bob conflicted copy 2026-12-02).txt",
		"a (x).txt", "a ().txt", "a (1234567890).txt",
		"-PC",                              // empty base
		"a-.txt", "a-0123456789ABCDEF.txt", // empty or 16-character computer name
		"my-file.txt", "x-y", // lower case: not a computer name
		"a b.txt",
	} {
		if got := Parse(name); got != nil {
			t.Errorf("Parse(%q) = %+v, want nil", name, got)
		}
	}
	// Markers in the wrong place for their tool: Syncthing puts the marker
	// before the last extension, never before an earlier one.
	if got := Parse("a" + stMark + ".tar.gz"); len(got) != 0 {
		t.Errorf("misplaced Syncthing marker parsed: %+v", got)
	}
	// Nextcloud treats a leading dot as part of the name.
	for _, c := range Parse(ncMark + ".bashrc") {
		if c.Marker.Tool == Nextcloud {
			t.Errorf("Nextcloud reading of a marker before a leading dot: %+v", c)
		}
	}
}

func TestIsToolFile(t *testing.T) {
	for _, n := range []string{".stfolder", ".stignore", ".stversions", ".syncthing.abc.tmp", "~syncthing~x.tmp", ".dropbox", "._sync_0a1b.db", ".sync_0a1b.db-wal", ".owncloudsync.log"} {
		if !IsToolFile(n) {
			t.Errorf("%q not recognised", n)
		}
	}
	for _, n := range []string{"stfolder", ".stfolder2", "report.txt", "gocryptfs.diriv", ".syncthing.tmp", cipher} {
		if IsToolFile(n) {
			t.Errorf("%q taken for a tool file", n)
		}
	}
}

func TestBaseIs(t *testing.T) {
	for _, m := range []Marker{{Syncthing, stMark}, {Nextcloud, ncMark}, {Dropbox, dbMark}, {OneDrive, odMark}, {Numbered, nbMark}} {
		name := m.Apply("gocryptfs.diriv")
		got, ok := BaseIs(name, "gocryptfs.diriv")
		if !ok || got != m {
			t.Errorf("BaseIs(%q) = %v %v, want %v", name, got, ok, m)
		}
	}
	if _, ok := BaseIs("gocryptfs.diriv", "gocryptfs.diriv"); ok {
		t.Error("the original is not a copy")
	}
	if _, ok := BaseIs("gocryptfs.diriv.rmdir.123", "gocryptfs.diriv"); ok {
		t.Error("a temporary name is not a copy")
	}
}

// TestRoundTripAllTools applies every marker to assorted names and parses
// the result back.
func TestRoundTripAllTools(t *testing.T) {
	names := []string{"a", "a.b", "a.b.c", ".x", ".x.y", cipher, long, strings.Repeat("z", 200) + ".txt", "with space (1)", "é.ü"}
	for _, m := range []Marker{{Syncthing, stMark}, {Nextcloud, ncMark}, {Nextcloud, ocMark}, {Dropbox, dbMark}, {OneDrive, odMark}, {Numbered, nbMark}} {
		for _, n := range names {
			c := m.Apply(n)
			ok := false
			for _, cand := range Parse(c) {
				if cand.Base == n && cand.Marker == m {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%q with %v = %q does not parse back: %+v", n, m, c, Parse(c))
			}
		}
	}
}
