//go:build testhooks

// The tests that fake a terminal (hooks_testhooks.go); test.bash runs
// them with -tags testhooks.

package readpassword

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/exitcodes"
)

// fakeTerminal answers prompts from a fixed list and records them.
type fakeTerminal struct {
	answers []string
	prompts []string
}

func (f *fakeTerminal) read(prompt string) ([]byte, error) {
	f.prompts = append(f.prompts, prompt)
	if len(f.answers) == 0 {
		return nil, io.EOF
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return []byte(a), nil
}

func TestSources(t *testing.T) {
	long := strings.Repeat("x", MaxPasswordLen+1)
	cases := []struct {
		name      string
		passfiles []string // file contents
		extpass   []string
		stdin     string
		tty       bool
		answers   []string
		twice     bool
		want      string
		wantCode  int
		wantErr   error
		prompts   string
	}{
		{name: "passfile", passfiles: []string{"secret\n"}, want: "secret"},
		{name: "passfile no newline", passfiles: []string{"secret"}, want: "secret"},
		{name: "passfile extra lines", passfiles: []string{"a\nb\n"}, want: "a"},
		{name: "passfile crlf kept verbatim", passfiles: []string{"a\r\n"}, want: "a\r"},
		{name: "stdin crlf kept verbatim", stdin: "a\r\n", want: "a\r"},
		{name: "passfile spaces kept", passfiles: []string{" a b \n"}, want: " a b "},
		{name: "passfiles concatenated", passfiles: []string{"ab\n", "cd\nzz"}, want: "abcd"},
		{name: "passfile empty", passfiles: []string{"\nfoo"}, wantCode: exitcodes.ReadPassword},
		{name: "passfile too long", passfiles: []string{long}, wantErr: ErrTooLong},
		{name: "passfile too long with newline", passfiles: []string{long + "\n"}, wantErr: ErrTooLong},
		{name: "passfile exactly max", passfiles: []string{long[1:] + "\nrest"}, want: long[1:]},
		{name: "passfiles together too long", passfiles: []string{long[1:], "y"}, wantErr: ErrTooLong},
		{name: "extpass too long", extpass: []string{"printf", long}, wantErr: ErrTooLong},
		{name: "terminal too long", tty: true, answers: []string{long}, wantErr: ErrTooLong},
		{name: "passfile beats stdin", passfiles: []string{"pf"}, stdin: "in\n", want: "pf"},
		{name: "extpass single split", extpass: []string{"echo  hello world"}, want: "hello world"},
		{name: "extpass argv verbatim", extpass: []string{"echo", "a  b"}, want: "a  b"},
		{name: "extpass first line", extpass: []string{"printf", `one\ntwo\n`}, want: "one"},
		{name: "extpass fails", extpass: []string{"false"}, wantCode: exitcodes.ReadPassword},
		{name: "extpass empty", extpass: []string{"true"}, wantCode: exitcodes.ReadPassword},
		{name: "extpass missing program", extpass: []string{"/nonexistent/prog"}, wantCode: exitcodes.ReadPassword},
		{name: "stdin line", stdin: "pw\nrest", want: "pw"},
		{name: "stdin eof", stdin: "pw", want: "pw"},
		{name: "stdin empty", stdin: "\n", wantCode: exitcodes.ReadPassword},
		{name: "stdin too long", stdin: long + "\n", wantCode: exitcodes.ReadPassword},
		{name: "stdin exactly max", stdin: long[1:] + "\n", want: long[1:]},
		{name: "stdin once even for new", stdin: "pw\n", twice: true, want: "pw"},
		{name: "terminal", tty: true, answers: []string{"t"}, want: "t", prompts: "Password: "},
		{name: "terminal empty", tty: true, answers: []string{""}, wantCode: exitcodes.ReadPassword},
		{name: "terminal twice", tty: true, twice: true, answers: []string{"t", "t"}, want: "t", prompts: "Password: |Repeat: "},
		{name: "terminal mismatch", tty: true, twice: true, answers: []string{"t", "u"}, wantCode: exitcodes.ReadPassword},
		{name: "terminal error", tty: true, wantCode: exitcodes.ReadPassword},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeTerminal{answers: c.answers}
			s := &Source{
				Extpass: c.extpass,
				Stdin:   strings.NewReader(c.stdin),
				hooks: testHooks{
					isTerminal:   func() bool { return c.tty },
					target:       func() string { return "pipe" },
					readTerminal: ft.read,
				},
				Stderr: io.Discard,
			}
			for _, pf := range c.passfiles {
				s.Passfiles = append(s.Passfiles, writeFile(t, pf))
			}
			var got []byte
			var err error
			if c.twice {
				got, err = s.Twice()
			} else {
				got, err = s.Once()
			}
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("got %q, err %v, want %v", got, err, c.wantErr)
				}
				return
			}
			if c.wantCode != 0 {
				if err == nil || codeOf(err) != c.wantCode {
					t.Fatalf("got %q, err %v (code %d), want code %d", got, err, codeOf(err), c.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if p := strings.Join(ft.prompts, "|"); p != c.prompts {
				t.Errorf("prompts %q, want %q", p, c.prompts)
			}
		})
	}
}

func TestMasterKeyFromStdin(t *testing.T) {
	key := strings.Repeat("ab", 32)
	s := &Source{Stdin: strings.NewReader(key + "\nmore")}
	k, err := s.MasterKeyFromStdin()
	if err != nil || len(k) != 32 || k[0] != 0xab {
		t.Fatalf("pipe: %x %v", k, err)
	}
	ft := &fakeTerminal{answers: []string{key}}
	s = &Source{hooks: testHooks{isTerminal: func() bool { return true }, readTerminal: ft.read}}
	if _, err := s.MasterKeyFromStdin(); err != nil || ft.prompts[0] != "Masterkey: " {
		t.Fatalf("terminal: %v %q", err, ft.prompts)
	}
	s = &Source{Stdin: strings.NewReader("nothex\n")}
	if _, err := s.MasterKeyFromStdin(); codeOf(err) != exitcodes.MasterKey {
		t.Fatalf("bad key: %v", err)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
