package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

func TestVersion(t *testing.T) {
	r := run(t, "-version")
	testutil.Expect(t, r, 0)
	re := regexp.MustCompile(`^gocryptfs ` + regexp.QuoteMeta(testVersion) + `( without_openssl)?; go-fuse v\S+; ` +
		testBuildDate + ` go\S+( -race)? \w+/\w+\n$`)
	if !re.MatchString(r.Stdout) {
		t.Errorf("version line %q does not match %v", r.Stdout, re)
	}
	if testutil.BuildTags() == "without_openssl" && !strings.Contains(r.Stdout, " without_openssl;") {
		t.Errorf("without_openssl build not reported: %q", r.Stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	existing := newDir(t)
	mnt := newDir(t)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no arguments", nil, 1, []string{"Usage: gocryptfs"}},
		{"short help", []string{"-h"}, 0, []string{"Usage: gocryptfs"}},
		{"short help long form", []string{"--help"}, 0, []string{"-hh"}},
		{"long help", []string{"-hh"}, 0, []string{"-scryptn", "(default 16)", "-exclude-wildcard", "-force_owner", "-uring auto|true|false"}},
		{"unknown flag", []string{"-foo", "c", "m"}, 1,
			[]string{`Invalid command line: "` + gocryptfsBin + `" "-foo" "c" "m": unknown flag: --foo. Try 'gocryptfs -help'.`}},
		{"unknown flag via -o", []string{"c", "m", "-o", "noatime"}, 1, []string{"unknown flag: --noatime"}},
		{"trailing -o", []string{"c", "m", "-o"}, 1, nil},
		{"-o piece o", []string{"c", "m", "-o", "ro,o"}, 1, nil},
		{"missing cipherdir arg", []string{"-q"}, 1, []string{"CIPHERDIR argument is missing"}},
		{"wrong number of args", []string{existing}, 1, []string{"Wrong number of arguments", "Usage:"}},
		{"too many args", []string{existing, mnt, "x"}, 1, []string{"Wrong number of arguments"}},
		{"two actions", []string{"-init", "-passwd", existing}, 1, nil},
		{"init two args", []string{"-init", existing, mnt}, 1, nil},
		{"extpass+passfile", []string{"-extpass", "x", "-passfile", "y", existing, mnt}, 1, nil},
		{"passfile+masterkey", []string{"-passfile", "y", "-masterkey", "00", existing, mnt}, 1, nil},
		{"longnamemax 61", []string{"-init", "-longnamemax", "61", existing}, 1, []string{"-longnamemax"}},
		{"longnamemax 256", []string{"-init", "-longnamemax", "256", existing}, 1, []string{"out of range"}},
		{"bad force_owner", []string{"-force_owner", "x", existing, mnt}, 1, []string{"-force_owner"}},
		{"bad openssl", []string{"-openssl", "maybe", existing, mnt}, 1, nil},
		{"bad uring", []string{"-uring", "maybe", existing, mnt}, 1, []string{`-uring: invalid value "maybe", must be one of auto, true, false`}},
		{"negative idle", []string{"-idle=-5s", existing, mnt}, 1, nil},
		{"bad badname", []string{"-badname", "[", existing, mnt}, 1, nil},
		{"bool with separate value", []string{"-raw64", "false", existing, mnt}, 1, []string{"Wrong number of arguments"}},
		{"missing cipherdir", []string{filepath.Join(existing, "nonexistent"), mnt}, 6, nil},
		{"cipherdir is a file", []string{"-info", filepath.Join(existing, "file")}, 6, nil},
		{"exclude in forward mode", []string{"-exclude", "x", existing, mnt}, 29, []string{"-exclude only works in reverse mode"}},
		{"cpuprofile unwritable", []string{"-cpuprofile", "/nonexistent/dir/prof", "-info", existing}, 25, nil},
		{"fsck reverse", []string{"-fsck", "-reverse", existing}, 1, nil},
	}
	if err := os.WriteFile(filepath.Join(existing, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testutil.Expect(t, run(t, c.args...), c.code, c.want...)
		})
	}
}

func TestOpenSSLFlag(t *testing.T) {
	dir := initFS(t)
	r := run(t, "-openssl=true", "-info", dir)
	if testutil.BuildTags() == "without_openssl" {
		testutil.Expect(t, r, 18)
	} else {
		testutil.Expect(t, r, 0)
	}
	testutil.Expect(t, run(t, "-openssl=false", "-info", dir), 0)
	testutil.Expect(t, run(t, "-openssl", "auto", "-info", dir), 0)
}

func TestSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("-speed measures for about 5 s")
	}
	r := run(t, "-speed")
	testutil.Expect(t, r, 0)
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 lines, got %q", r.Stdout)
	}
	if !strings.HasPrefix(lines[0], "gocryptfs "+testVersion) || !strings.HasPrefix(lines[1], "cpu: ") {
		t.Errorf("header lines %q", lines[:2])
	}
	re := regexp.MustCompile(`^[A-Za-z0-9-]{1,26} *\t( *\d+\.\d\d MB/s|    N/A)(\t\(selected in auto mode\))?$`)
	for _, l := range lines[2:] {
		if !re.MatchString(l) {
			t.Errorf("bad speed line %q", l)
		}
	}
}
