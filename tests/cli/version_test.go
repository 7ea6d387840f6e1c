package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// semver is the shape of every version version.bash prints.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9]+-g[0-9a-f]+)?(-dirty)?$`)

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

// TestVersionScript: build.bash stamps a semantic version from the latest
// tag (vX.Y.Z[-N-gHASH]) so that "gocryptfs vX" parsers keep working;
// without any tag, and outside git (VERSION file of a tarball, or
// nothing), the version still has that shape.
func TestVersionScript(t *testing.T) {
	if v := runVersionScript(t, ""); !semver.MatchString(v) {
		t.Errorf("version.bash in the repository: %q is no vX.Y.Z[-N-gHASH]", v)
	}
	dir := t.TempDir()
	if v := runVersionScript(t, dir); v != "v0.0.0-unknown" {
		t.Errorf("outside git: %q", v)
	}
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("v2.6.0\n"), 0o644); err != nil {
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
	git("init", "-q")
	git("add", "version.bash")
	git("commit", "-qm", "one")
	if v := runVersionScript(t, dir); !regexp.MustCompile(`^v0\.0\.0-0-g[0-9a-f]+$`).MatchString(v) {
		t.Errorf("git without tags: %q", v)
	}
	git("add", "VERSION")
	git("commit", "-qm", "two")
	git("tag", "-a", "-m", "release", "v2.6.0", "HEAD~1")
	if v := runVersionScript(t, dir); !regexp.MustCompile(`^v2\.6\.0-1-g[0-9a-f]+$`).MatchString(v) {
		t.Errorf("one commit after tag v2.6.0: %q", v)
	}
}
