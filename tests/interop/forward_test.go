package interop_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gocryptfs/internal/testutil"
	"testing"
)

// mode is a configuration of 2.3, given by its -init flags, with the
// feature flags its config file must and must not list (so that a flag
// one implementation ignores at -init is noticed).
type mode struct {
	name  string
	flags []string
	// masterkey modes have no -init and no config: the directory gets a
	// hand-made gocryptfs.diriv and every mount and -fsck gets
	// -masterkey and flags. It is the only way 2.3 writes the legacy
	// formats (padded base64 names, no HKDF), since -init ignores
	// -raw64=false and -hkdf=false.
	masterkey  bool
	has, lacks []string
}

// forwardModes are the forward-mode configurations 2.3 can create.
var forwardModes = []mode{
	{"default", nil, false, []string{"HKDF", "GCMIV128", "DirIV", "EMENames", "LongNames", "Raw64"}, []string{"AESSIV", "PlaintextNames", "LongNameMax"}},
	{"aessiv", []string{"-aessiv"}, false, []string{"AESSIV", "GCMIV128", "DirIV", "EMENames"}, nil},
	{"xchacha", []string{"-xchacha"}, false, []string{"XChaCha20Poly1305", "DirIV", "EMENames"}, []string{"GCMIV128", "AESSIV"}},
	{"plaintextnames", []string{"-plaintextnames"}, false, []string{"PlaintextNames"}, []string{"DirIV", "EMENames", "LongNames"}},
	{"deterministic-names", []string{"-deterministic-names"}, false, []string{"EMENames", "LongNames"}, []string{"DirIV"}},
	{"longnamemax100", []string{"-longnamemax", "100"}, false, []string{"LongNameMax", "LongNames"}, nil},
	{"longnamemax62", []string{"-longnamemax", "62"}, false, []string{"LongNameMax", "LongNames"}, nil},
	{"raw64=false", []string{"-raw64=false"}, true, nil, nil},
	{"raw64=false-hkdf=false", []string{"-raw64=false", "-hkdf=false"}, true, nil, nil},
}

// auth returns the arguments that unlock a directory of mode m for i: its
// password arguments, or the master key and the mode's flags.
func (i impl) auth(t *testing.T, m mode) []string {
	t.Helper()
	if m.masterkey {
		return append([]string{"-masterkey", testutil.MasterKeyHex}, m.flags...)
	}
	return i.passArgs(t)
}

// TestForward runs every forward mode in both directions: the creator
// inits a directory and fills it through its mount (the same operations
// run on a plain directory), the other implementation mounts it and must
// show exactly what the creator showed (contents, sizes, modes, owners,
// timestamps, symlink targets, link counts and hard-link sharing,
// xattrs), then writes to it; the creator mounts it again and must show
// the result, which must match the plain directory after the same
// writes. Both -fsck must accept the directory before and after.
func TestForward(t *testing.T) {
	setup(t)
	runModes(t, forwardModes, "directions", func(m mode, pair [2]impl) (string, roundTrip) {
		creator, other := pair[0], pair[1]
		return creator.name + "-to-" + other.name, func(t *testing.T) (int, int) {
			return forwardRoundTrip(t, creator, other, m)
		}
	})
}

// forwardRoundTrip is one mode in one direction; it returns the number of
// field checks and of entries compared.
func forwardRoundTrip(t *testing.T, creator, other impl, m mode) (checks, entries int) {
	cipher := testutil.NewDir(t, "cipher")
	plain := testutil.NewDir(t, "plain")
	if m.masterkey {
		// As a user of 2.3 would make a legacy directory by hand.
		if err := os.WriteFile(filepath.Join(cipher, "gocryptfs.diriv"), data(t.Name(), 16), 0o400); err != nil {
			t.Fatal(err)
		}
	} else {
		creator.initDir(t, cipher, m.flags...)
		checks += checkConfig(t, filepath.Join(cipher, "gocryptfs.conf"), m)
		checks += sameInfo(t, creator, other, cipher)
	}
	// Password mounts get no mode flags: they must take them from the
	// config.
	mnt := creator.mount(t, cipher, creator.auth(t, m)...)
	populate(ops{t, plain})
	populate(ops{t, mnt})
	byCreator := scan(t, mnt)
	wantPlain := scan(t, plain)
	checks += compare(t, "plain dir", wantPlain, creator.name+"'s mount", byCreator, compareOpts{nlink: true, xattrs: true, mtimeOf: populateTimes})
	testutil.UnmountDir(t, mnt)
	creator.fsck(t, cipher, creator.auth(t, m)...)
	other.fsck(t, cipher, other.auth(t, m)...)

	checks += checkCiphertext(t, cipher, m)

	sum := testutil.TreeSum(t, cipher)
	mnt = other.mount(t, cipher, other.auth(t, m)...)
	byOther := scan(t, mnt)
	checks += compare(t, creator.name+"'s mount", byCreator, other.name+"'s mount", byOther, compareOpts{mtime: true, dirSize: true, nlink: true, xattrs: true})
	checks++
	if testutil.TreeSum(t, cipher) != sum {
		t.Errorf("reading everything through %s's mount changed the ciphertext", other.name)
	}
	modify(ops{t, plain})
	modify(ops{t, mnt})
	byOther = scan(t, mnt)
	testutil.UnmountDir(t, mnt)
	other.fsck(t, cipher, other.auth(t, m)...)
	creator.fsck(t, cipher, creator.auth(t, m)...)

	mnt = creator.mount(t, cipher, creator.auth(t, m)...)
	byCreator = scan(t, mnt)
	checks += compare(t, other.name+"'s mount", byOther, creator.name+"'s mount", byCreator, compareOpts{mtime: true, dirSize: true, nlink: true, xattrs: true})
	checks += compare(t, "plain dir", scan(t, plain), creator.name+"'s mount", byCreator, compareOpts{nlink: true, xattrs: true, mtimeOf: modifyTimes})
	testutil.UnmountDir(t, mnt)
	entries = len(wantPlain) + len(byCreator)
	t.Logf("%s, created by %s: %d entries, %d checks", m.name, creator.name, entries, checks)
	return checks, entries
}

// checkConfig fails the test unless the config file at path lists the
// feature flags m wants and none it must not, with LongNameMax 100 for
// the -longnamemax of m. It returns the number of checks.
func checkConfig(t *testing.T, path string, m mode) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		FeatureFlags []string
		LongNameMax  int
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, f := range m.has {
		if !slices.Contains(c.FeatureFlags, f) {
			t.Errorf("%s: feature flag %s missing: %s", path, f, b)
		}
	}
	for _, f := range m.lacks {
		if slices.Contains(c.FeatureFlags, f) {
			t.Errorf("%s: unexpected feature flag %s: %s", path, f, b)
		}
	}
	want := 0 // absent
	if i := slices.Index(m.flags, "-longnamemax"); i >= 0 {
		want, _ = strconv.Atoi(m.flags[i+1])
	}
	if c.LongNameMax != want {
		t.Errorf("%s: LongNameMax %d, want %d", path, c.LongNameMax, want)
	}
	return len(m.has) + len(m.lacks) + 1
}

// checkCiphertext checks the cipherdir's names: no plaintext name shows
// unless names are not encrypted; encrypted names are padded base64 with
// -raw64=false and raw base64 otherwise; and the long names were hashed
// into gocryptfs.longname.* files (the more of them, the lower
// -longnamemax). It returns the number of checks.
func checkCiphertext(t *testing.T, cipher string, m mode) int {
	t.Helper()
	plainNames := slices.Contains(m.has, "PlaintextNames")
	padded := slices.Contains(m.flags, "-raw64=false")
	longnames, checks := 0, 0
	sawPadding := false
	err := filepath.WalkDir(cipher, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == cipher {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, "gocryptfs.longname.") {
			longnames++
		}
		if plainNames || strings.HasPrefix(name, "gocryptfs.") {
			return nil
		}
		checks++
		if name == "multiblock" || name == "leaf" || name == name255 {
			t.Errorf("plaintext name in the cipherdir: %s", p)
		}
		if strings.HasSuffix(name, "=") {
			sawPadding = true
			if !padded {
				t.Errorf("padded base64 name without -raw64=false: %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if padded && !sawPadding {
		t.Errorf("-raw64=false but no padded base64 name in %s", cipher)
	}
	// Hashed in the default configuration: the 176- and 255-byte names
	// (their encryption exceeds 255 bytes), each a file and a .name file.
	wantMin := 2
	switch {
	case plainNames:
		wantMin = 0
	case slices.Contains(m.flags, "-longnamemax"):
		wantMin = 12
	}
	if plainNames && longnames != 0 || longnames < wantMin {
		t.Errorf("%d gocryptfs.longname.* entries in the cipherdir, want at least %d (plaintextnames: 0)", longnames, wantMin)
	}
	return checks + 2
}

// TestInitRaw64False checks that -init of both implementations ignores
// -raw64=false (and -hkdf=false): the config has Raw64 and HKDF and the
// same feature flags as a default -init. Padded names need -masterkey
// mounts; forwardModes covers them.
func TestInitRaw64False(t *testing.T) {
	is := setup(t)
	def := mode{has: forwardModes[0].has, lacks: forwardModes[0].lacks}
	for _, i := range []impl{is.ours, is.ref} {
		dir := testutil.NewDir(t, "cipher")
		i.initDir(t, dir, "-raw64=false", "-hkdf=false")
		checkConfig(t, filepath.Join(dir, "gocryptfs.conf"), def)
	}
}

// sameInfo fails the test unless -info of a and b print the same for
// cipherdir (extra are more flags, like -reverse). It returns the number
// of checks.
func sameInfo(t *testing.T, a, b impl, cipherdir string, extra ...string) int {
	t.Helper()
	args := append(append([]string{"-info"}, extra...), cipherdir)
	ra, rb := a.run(t, args...), b.run(t, args...)
	if ra.Stdout != rb.Stdout {
		t.Errorf("-info of %s:\n%s\n-info of %s:\n%s", a.name, ra.Stdout, b.name, rb.Stdout)
	}
	return 1
}
