package interop_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// reverseModes are the reverse-mode configurations 2.3 can create (it
// refuses -xchacha with -reverse; AES-SIV is implied). -init ignores
// -raw64=false with -reverse, too (the config keeps Raw64, in both); the
// -masterkey modes make padded names.
var reverseModes = []mode{
	{"default", nil, false, []string{"AESSIV", "DirIV", "EMENames", "LongNames", "Raw64"}, []string{"PlaintextNames", "LongNameMax"}},
	{"plaintextnames", []string{"-plaintextnames"}, false, []string{"AESSIV", "PlaintextNames"}, []string{"DirIV", "EMENames"}},
	{"deterministic-names", []string{"-deterministic-names"}, false, []string{"AESSIV", "EMENames"}, []string{"DirIV"}},
	{"init-raw64=false", []string{"-raw64=false"}, false, []string{"AESSIV", "DirIV", "Raw64"}, nil},
	{"longnamemax100", []string{"-longnamemax", "100"}, false, []string{"AESSIV", "LongNameMax"}, nil},
	{"raw64=false", []string{"-raw64=false"}, true, nil, nil},
	{"raw64=false-hkdf=false", []string{"-raw64=false", "-hkdf=false"}, true, nil, nil},
}

// reverseConf is the config file -init -reverse writes into the plain
// directory; the view shows it as gocryptfs.conf.
const reverseConf = ".gocryptfs.reverse.conf"

// TestReverse runs every reverse mode with each implementation doing the
// -init -reverse: both implementations mount the same plain directory
// with -reverse, and their encrypted views must be identical (names,
// contents, sizes, modes, timestamps, symlink targets, link counts,
// xattrs: reverse mode is deterministic); then each view is mounted
// forward by the other implementation and must show the plain directory.
// Each implementation's -fsck must accept the other's view.
func TestReverse(t *testing.T) {
	is := setup(t)
	runModes(t, reverseModes, "creators", func(m mode, pair [2]impl) (string, roundTrip) {
		creator := pair[0]
		if m.masterkey {
			// Nobody inits: one run covers both.
			if creator != is.ours {
				return "", nil
			}
			return "masterkey", func(t *testing.T) (int, int) {
				return reverseRoundTrip(t, is, creator, m)
			}
		}
		return "init-by-" + creator.name, func(t *testing.T) (int, int) {
			return reverseRoundTrip(t, is, creator, m)
		}
	})
}

// virtualMtimeShift is how far ahead the timestamps of gocryptfs.diriv
// and gocryptfs.longname.*.name files in our view are: 10 s after their
// source entry's, as docs/format.md 9.3 specifies after newer reference
// versions; 2.3 shows the source entry's timestamps unchanged. Only sync
// tools see the difference, not the format.
func virtualMtimeShift(p string) int64 {
	b := path.Base(p)
	if b == "gocryptfs.diriv" || strings.HasPrefix(b, "gocryptfs.longname.") && strings.HasSuffix(b, ".name") {
		return 10
	}
	return 0
}

// reverseRoundTrip is one reverse mode with creator doing the -init; it
// returns the number of field checks and of entries compared.
//
// 2.3's view has no xattrs (as still in 2.4.0, rfjakob/gocryptfs#827;
// later reference versions encrypt them, as our view does): the test checks that 2.3's view lists none, so that a newer
// Debian package is noticed, and compares xattrs only through our view,
// whose xattrs 2.3's forward mount must decrypt.
func reverseRoundTrip(t *testing.T, is impls, creator impl, m mode) (checks, entries int) {
	plain := testutil.NewDir(t, "plain")
	populate(ops{t, plain})
	// Forward mounts of a -masterkey view need -aessiv: nothing tells
	// them the view's cipher.
	var fwdFlags []string
	if m.masterkey {
		fwdFlags = []string{"-aessiv"}
	} else {
		creator.initDir(t, plain, append([]string{"-reverse"}, m.flags...)...)
		checks += checkConfig(t, filepath.Join(plain, reverseConf), m)
		checks += sameInfo(t, is.ours, is.ref, plain, "-reverse")
	}
	wantPlain := scan(t, plain, reverseConf)

	viewOurs := is.ours.mount(t, plain, append(is.ours.auth(t, m), "-reverse")...)
	viewRef := is.ref.mount(t, plain, append(is.ref.auth(t, m), "-reverse")...)
	byOurs := scan(t, viewOurs)
	byRef := scan(t, viewRef)
	checks += compare(t, "ref's view", byRef, "ours' view", byOurs, compareOpts{
		mtime: true, mtimeShift: virtualMtimeShift, dirSize: true, nlink: true})
	checks += expectNoXattrs(t, "ref's view", byRef)
	if m.masterkey {
		checks += checkCiphertext(t, viewOurs, m)
	}

	for _, c := range []struct {
		view   string
		viewer impl
		reader impl
		xattrs bool
	}{{viewOurs, is.ours, is.ref, true}, {viewRef, is.ref, is.ours, false}} {
		fwd := c.reader.mount(t, c.view, append(c.reader.auth(t, m), fwdFlags...)...)
		byFwd := scan(t, fwd)
		name := c.reader.name + "'s forward mount of " + c.viewer.name + "'s view"
		checks += compare(t, "plain dir", wantPlain, name, byFwd, compareOpts{mtime: true, nlink: true, xattrs: c.xattrs})
		if !c.xattrs {
			checks += expectNoXattrs(t, name, byFwd)
		}
		testutil.UnmountDir(t, fwd)
		c.reader.fsck(t, c.view, append(c.reader.auth(t, m), fwdFlags...)...)
	}
	entries = len(wantPlain) + len(byOurs)
	by := "init by " + creator.name
	if m.masterkey {
		by = "-masterkey"
	}
	t.Logf("%s, %s: %d entries, %d checks", m.name, by, entries, checks)
	return checks, entries
}

// expectNoXattrs fails the test if any entry of m has a user.* xattr (or
// an error listing them), and returns the number of entries checked.
func expectNoXattrs(t *testing.T, name string, m manifest) int {
	t.Helper()
	for p, e := range m {
		if e.xattrs != "" {
			t.Errorf("%s: %s has xattrs %s, want none", name, short(p), clip(e.xattrs))
		}
	}
	return len(m)
}

// TestReverseExclude mounts one plain directory with -reverse and the
// same exclusions (-e, -exclude-wildcard, -exclude-from) by both
// implementations: the views must be identical, and the forward mount of
// ours' view by the reference must show the plain directory without the
// excluded entries.
//
// Two quirks of 2.3 are left out. Given both the short and the long form
// of a flag (-e and -exclude, -ew and -exclude-wildcard), it applies only
// the patterns of one of them; ours applies all. And a directory pattern
// with a trailing slash ("/hl/") hides the directory's contents but still
// shows the directory, where ours, as gitignore, hides the directory.
func TestReverseExclude(t *testing.T) {
	is := setup(t)
	plain := testutil.NewDir(t, "plain")
	populate(ops{t, plain})
	is.ref.initDir(t, plain, "-reverse")
	patterns := filepath.Join(t.TempDir(), "patterns")
	if err := os.WriteFile(patterns, []byte("# comment\n/hl\nsparse-*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	excl := []string{"-reverse", "-e", "a/b", "-e", "dangling", "-exclude-wildcard", "*.long", "-exclude-wildcard", "size40*", "-exclude-from", patterns}
	excluded := func(p string) bool {
		b := path.Base(p)
		return p == "a/b" || strings.HasPrefix(p, "a/b/") || p == "dangling" || strings.HasSuffix(b, ".long") ||
			strings.HasPrefix(b, "size40") && !strings.Contains(p, "/") || p == "hl" || strings.HasPrefix(p, "hl/") ||
			strings.HasPrefix(b, "sparse-")
	}

	viewOurs := is.ours.mount(t, plain, append(is.ours.passArgs(t), excl...)...)
	viewRef := is.ref.mount(t, plain, append(is.ref.passArgs(t), excl...)...)
	byOurs := scan(t, viewOurs)
	checks := compare(t, "ref's view", scan(t, viewRef), "ours' view", byOurs, compareOpts{
		mtime: true, mtimeShift: virtualMtimeShift, dirSize: true, nlink: true})

	want := manifest{}
	for p, e := range scan(t, plain, reverseConf) {
		if !excluded(p) {
			want[p] = e
		}
	}
	fwd := is.ref.mount(t, viewOurs, is.ref.passArgs(t)...)
	// Hard-link groups and link counts count the excluded names too.
	checks += compare(t, "plain dir without the excluded", want, "ref's forward mount of ours' view", scan(t, fwd),
		compareOpts{mtime: true, xattrs: true, ignoreLinks: true})
	if len(want) > len(byOurs) || len(want) < 20 {
		t.Errorf("%d entries left in the plain dir, %d in the view: the exclusions are off", len(want), len(byOurs))
	}
	t.Logf("%d entries in the view, %d checks", len(byOurs), checks)
}
