package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/buildinfo"
	"gocryptfs/internal/testutil"
)

// semver is the shape of every version version.bash prints in git:
// vX.Y.Z[-N-gHASH][-dirty] from a tag, vX.Y.Z-dev+[N.]gHASH[.dirty]
// without one.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+((-[0-9]+-g[0-9a-f]+)?(-dirty)?|-dev\+([0-9]+\.)?g[0-9a-f]+(\.dirty)?)$`)

// runVersionScript runs a copy of version.bash (or the original when dir
// is "") and returns its output line.
func runVersionScript(t *testing.T, dir string) string {
	t.Helper()
	script, err := filepath.Abs("../../version.bash")
	if err != nil {
		t.Fatal(err)
	}
	if dir != "" {
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		script = filepath.Join(dir, "version.bash")
		if err := os.WriteFile(script, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/bin/bash", script)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+os.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return strings.TrimSpace(string(out))
}

// TestVersionScript: build.bash stamps the version that version.bash
// prints. A tag wins (vX.Y.Z[-N-gHASH]); a clone without tags (release
// tags do not travel with every clone) says the release of
// internal/buildinfo/VERSION with "-dev+N.gHASH", N commits after that
// file changed, so that it still starts with "v2." (it used to say
// v0.0.0-0-gHASH); outside git it is VERSION's release (a tarball).
func TestVersionScript(t *testing.T) {
	if v := runVersionScript(t, ""); !semver.MatchString(v) || !strings.HasPrefix(v, "v2.") {
		t.Errorf("version.bash in the repository: %q is no v2.X.Y[-N-gHASH] or v2.X.Y-dev+N.gHASH", v)
	}
	dir := t.TempDir()
	if v := runVersionScript(t, dir); v != "v0.0.0-unknown" {
		t.Errorf("outside git: %q", v)
	}
	vfile := filepath.Join(dir, "internal", "buildinfo", "VERSION")
	if err := os.MkdirAll(filepath.Dir(vfile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vfile, []byte("v2.6.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := runVersionScript(t, dir); v != "v2.6.0" {
		t.Errorf("outside git with VERSION: %q", v)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	git := func(args ...string) {
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@localhost"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	expect := func(what, re string) {
		t.Helper()
		if v := runVersionScript(t, dir); !regexp.MustCompile(re).MatchString(v) {
			t.Errorf("%s: %q does not match %s", what, v, re)
		}
	}
	git("init", "-q")
	git("add", "version.bash")
	git("commit", "-qm", "one")
	// VERSION not in the history yet, as in a shallow clone that lacks
	// the commit that changed it: no count.
	expect("git without tags, VERSION not committed", `^v2\.6\.0-dev\+g[0-9a-f]+$`)
	git("add", "internal/buildinfo/VERSION")
	git("commit", "-qm", "two: VERSION")
	expect("git without tags, at the VERSION commit", `^v2\.6\.0-dev\+0\.g[0-9a-f]+$`)
	notes := filepath.Join(dir, "notes")
	if err := os.WriteFile(notes, []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "notes")
	git("commit", "-qm", "three")
	expect("git without tags, one commit later", `^v2\.6\.0-dev\+1\.g[0-9a-f]+$`)
	if err := os.WriteFile(notes, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("git without tags, modified", `^v2\.6\.0-dev\+1\.g[0-9a-f]+\.dirty$`)
	git("checkout", "-q", "notes")
	git("tag", "-a", "-m", "release", "v2.6.0", "HEAD~1")
	expect("one commit after tag v2.6.0", `^v2\.6\.0-1-g[0-9a-f]+$`)
	git("tag", "-a", "-m", "release", "v2.6.1", "HEAD")
	expect("at tag v2.6.1", `^v2\.6\.1$`)
}

// TestVersionUnstamped: a binary built with plain "go build" (no version
// stamped in) reports the release of internal/buildinfo/VERSION with
// "-dev", in -version and in the Creator of a new config, so that both
// start with "gocryptfs v2." (they used to say v0.0.0-dev-HASH).
func TestVersionUnstamped(t *testing.T) {
	dir, cleanup, err := testutil.BuildBinaries(testutil.Build{Packages: []string{"."}, Date: testBuildDate})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	bin := filepath.Join(dir, "gocryptfs")
	want := "gocryptfs " + buildinfo.Release() + "-dev"
	if !strings.HasPrefix(want, "gocryptfs v2.") {
		t.Fatalf("internal/buildinfo/VERSION says %q, want v2.X.Y", buildinfo.Release())
	}
	r := testutil.Run(t, testutil.RunOptions{}, bin, "-version")
	testutil.Expect(t, r, 0)
	if !strings.HasPrefix(r.Stdout, want) {
		t.Errorf("-version of a plain build: %q, want %s...", r.Stdout, want)
	}
	cipher := testutil.InitFS(t, bin)
	b, err := os.ReadFile(filepath.Join(cipher, "gocryptfs.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct{ Creator string }
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conf.Creator, want) {
		t.Errorf("Creator of a new config: %q, want %s...", conf.Creator, want)
	}
}
