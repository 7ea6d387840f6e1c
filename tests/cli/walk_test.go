package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// This file checks the command-line details that a side-by-side walk with
// the reference found (issue 21, item 7).

// cheapArgon2id are -argon2id costs that keep the tests fast.
var cheapArgon2id = []string{"-argon2id", "-argon2id-memory", "8", "-argon2id-time", "1"}

// refusedWarning is the start of the warning that the reference will
// refuse the filesystem because of its first key slot.
const refusedWarning = "is not in the format gocryptfs 2.x reads, so older versions refuse this filesystem"

// TestInitSaysReferenceRefuses: -init with an option that makes gocryptfs
// 2.x refuse the filesystem (-argon2id: feature flag KeySlots) says so
// right away, as -removekey of slot 0 does; a plain -init does not. It
// used to say nothing (also with -q) until the reference was tried.
func TestInitSaysReferenceRefuses(t *testing.T) {
	r := run(t, append(append([]string{"-init", "-q", "-extpass", "echo test"}, cheapArgon2id...), newDir(t))...)
	testutil.Expect(t, r, 0, refusedWarning, "-passwd")
	r = run(t, "-init", "-q", "-scryptn", "10", "-extpass", "echo test", "-label", "laptop", newDir(t))
	testutil.Expect(t, r, 0)
	if strings.Contains(r.Stdout+r.Stderr, "refuse") {
		t.Errorf("a filesystem the reference opens: %v", r)
	}
	// -passwd that moves the first slot to Argon2id says it too.
	dir := initFS(t)
	r = runWith(t, testutil.RunOptions{Stdin: "newpw\n"}, append([]string{"-passwd", "-extpass", "echo test"}, append(cheapArgon2id, dir)...)...)
	testutil.Expect(t, r, 0, refusedWarning)
}

// addKeyFileSlot adds a key-file slot with label to dir and returns the
// key file.
func addKeyFileSlot(t *testing.T, dir, label string) string {
	t.Helper()
	kf := filepath.Join(t.TempDir(), "keyfile")
	if err := os.WriteFile(kf, []byte("the right key file"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-addkey", "-extpass", "echo test", "-newkeyfile", kf, "-label", label}, cheapArgon2id...)
	testutil.Expect(t, run(t, append(args, dir)...), 0)
	return kf
}

// TestRemoveKeyNamesLabel: -removekey says which slot it removed by number
// and label (it used to give the number only).
func TestRemoveKeyNamesLabel(t *testing.T) {
	dir := initFS(t)
	kf := addKeyFileSlot(t, dir, "backup disk")
	testutil.Expect(t, run(t, "-removekey", "-keyfile", kf, dir), 0, `Key slot 1 (label "backup disk") removed.`)
}

// TestWrongKeyFile: a key file that opens no slot says so, with the exit
// code of a wrong password (12, docs/cli.md 3.5), instead of "Password
// incorrect." (the user gave no password).
func TestWrongKeyFile(t *testing.T) {
	dir := initFS(t)
	addKeyFileSlot(t, dir, "usb")
	wrong := filepath.Join(t.TempDir(), "wrong")
	if err := os.WriteFile(wrong, []byte("another file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-keyfile", wrong, dir, newDir(t)},
		{"-passwd", "-keyfile", wrong, "-newkeyfile", wrong, dir},
		{"-removekey", "-keyfile", wrong, dir},
	} {
		r := run(t, args...)
		testutil.Expect(t, r, 12, "key file does not unlock any slot")
		if strings.Contains(r.Stderr, "Password incorrect") {
			t.Errorf("%v: %v", args, r)
		}
	}
	// A wrong password keeps its message.
	testutil.Expect(t, run(t, "-extpass", "echo wrong", dir, newDir(t)), 12, "Password incorrect.")
}

// helpDefault matches a flag and its default in the -hh output.
var helpDefault = regexp.MustCompile(`(?m)^  (-[^\n]+)\n\s+(.*) \(default "?([^"\n]*)"?\)$`)

// TestHelpDefaultsMatchDocs: the default of every flag as -hh prints it is
// the one docs/cli.md gives in its flag tables (where the docs give a value,
// not a description such as "read-write"), and the limits that -hh states
// are those of docs/cli.md and the man page. -hh used to say "(default 0)"
// for -longnamemax (docs: 255) and "longer than 176 bytes" for -longnames
// (it is 175: a 175-byte name encrypts to 235 characters, a 176-byte one to
// 256, over the 255 limit; the reference's -hh says 175).
func TestHelpDefaultsMatchDocs(t *testing.T) {
	r := run(t, "-hh")
	testutil.Expect(t, r, 0)
	hh := r.Stdout
	cli := readProjectFile(t, "docs/cli.md")
	man := strings.ReplaceAll(readProjectFile(t, "docs/man/gocryptfs.1"), `\-`, "-")

	// Defaults: the docs' table rows "| `-flag`, `-alias` | value | default | ...".
	docDefault := map[string]string{}
	row := regexp.MustCompile("(?m)^\\| (`-[^|]+) \\| [^|]* \\| ([^|]*) \\|")
	for _, m := range row.FindAllStringSubmatch(cli, -1) {
		for _, f := range regexp.MustCompile("`(-[^`]+)`").FindAllStringSubmatch(m[1], -1) {
			docDefault[f[1]] = strings.TrimSpace(m[2])
		}
	}
	literal := regexp.MustCompile(`^("[^"]*"|true|false|auto|[0-9]+)( |$)`)
	checked := 0
	for _, m := range helpDefault.FindAllStringSubmatch(hh, -1) {
		flag := strings.Fields(strings.Split(m[1], ",")[0])[0]
		def := strings.TrimSuffix(m[3], "0s") // durations: "0s" is "0"
		if m[3] == "0s" {
			def = "0"
		}
		doc, ok := docDefault[flag]
		lit := literal.FindStringSubmatch(doc)
		if !ok || lit == nil {
			continue // no row, or a described default ("read-write", "CIPHERDIR")
		}
		if want := strings.Trim(lit[1], `"`); want != def {
			t.Errorf("%s: -hh says default %q, docs/cli.md %q", flag, def, lit[1])
		}
		checked++
	}
	if checked < 40 {
		t.Errorf("only %d defaults compared; did the -hh or table format change?", checked)
	}

	// Limits, as -hh, docs/cli.md and the man page state them.
	for _, c := range []struct{ hh, cli, man string }{
		{"-longnamemax uint8\n    \tHash encrypted names that are longer than this (62..255; 0 means 255) (default 255)",
			"| `-longnamemax` | 62..255 | 255 (0 means the default)", "(62..255, default 255)"},
		{"Store names longer than 175 bytes in extra files", "names longer than 175 bytes", "names longer than 175 bytes"},
		{"scrypt cost parameter as log2(N); range 10..28 (default 16)", "scrypt cost, 10..28", "10..28 (default 16)"},
		{"Argon2id passes (1..64) (default 3)", "Argon2id passes (1..64", "passes (1..64, default 3)"},
		{"Argon2id memory in MiB (8..4096) (default 128)", "| `-argon2id-memory` | MiB | 128 |", "(8..4096, default 128)"},
	} {
		if !strings.Contains(hh, c.hh) {
			t.Errorf("-hh lacks %q", c.hh)
		}
		if !strings.Contains(cli, c.cli) {
			t.Errorf("docs/cli.md lacks %q", c.cli)
		}
		if !strings.Contains(man, c.man) {
			t.Errorf("docs/man/gocryptfs.1 lacks %q", c.man)
		}
	}
	for _, doc := range []string{hh, cli, man} {
		if strings.Contains(doc, "176 bytes") {
			t.Error("a help text says 176 bytes")
		}
	}
}

// TestManPagesNameOnlyInstalledFiles: the man pages are installed without
// the docs/*.md files, so they must not send readers to those as if they
// were at hand: a .md file is only named in a sentence that says it is in
// the source tree.
func TestManPagesNameOnlyInstalledFiles(t *testing.T) {
	md := regexp.MustCompile(`[\w./-]+\.md\b`)
	for _, page := range []string{"docs/man/gocryptfs.1", "docs/man/gocryptfs-xray.1"} {
		text := regexp.MustCompile(`\\f[BIRP]`).ReplaceAllString(readProjectFile(t, page), "")
		for _, loc := range md.FindAllStringIndex(text, -1) {
			line := strings.LastIndex(text[:loc[0]], "\n") + 1
			if strings.HasPrefix(text[line:], `.\"`) {
				continue // a roff comment, not shown
			}
			// The sentence: from the previous full stop or roff request
			// to the next full stop.
			start := max(strings.LastIndex(text[:loc[0]], ". "), strings.LastIndex(text[:loc[0]], "\n."), 0)
			end := len(text)
			for _, stop := range []string{". ", ".\n"} {
				if i := strings.Index(text[loc[1]:], stop); i >= 0 {
					end = min(end, loc[1]+i)
				}
			}
			if !strings.Contains(strings.ReplaceAll(text[start:end], "\n", " "), "source tree") {
				t.Errorf("%s names %s without saying it ships only in the source tree: %q", page, text[loc[0]:loc[1]], text[start:end])
			}
		}
	}
}

// readProjectFile returns the file at rel (relative to the project root).
func readProjectFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := testutil.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
