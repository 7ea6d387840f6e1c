package readpassword

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
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
				Extpass:         c.extpass,
				Stdin:           strings.NewReader(c.stdin),
				StdinIsTerminal: func() bool { return c.tty },
				StdinTarget:     func() string { return "pipe" },
				Terminal:        ft.read,
				Stderr:          io.Discard,
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

// -passwd reads the old password from line 1 and the new one from line 2.
// TestPassfileReadsBoundedPrefix hands a passfile that never ends (a FIFO
// fed with zeros, like -passfile /dev/zero but with its consumption
// measurable): at most the documented maximum is read, the password is
// refused as too long, and the writer sees the reader go away instead of
// the whole stream being buffered.
func TestPassfileReadsBoundedPrefix(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	const limit = 64 << 20
	written := make(chan int64, 1)
	go func() {
		var n int64
		defer func() { written <- n }()
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		chunk := make([]byte, 64<<10)
		for n < limit {
			m, err := f.Write(chunk)
			n += int64(m)
			if err != nil {
				return // EPIPE: the reader is done
			}
		}
	}()
	s := &Source{Passfiles: []string{p}}
	pw, err := s.Once()
	if !errors.Is(err, ErrTooLong) {
		t.Errorf("Once = %d bytes, %v; want ErrTooLong", len(pw), err)
	}
	// Unblock a writer that is still waiting for a reader (only if the
	// reader never opened the FIFO, which is a failure anyway).
	if f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
	if n := <-written; n >= 1<<20 {
		t.Errorf("the reader consumed %d bytes of an endless passfile", n)
	}
}

func TestStdinLeavesRestUnread(t *testing.T) {
	in := strings.NewReader("old\nnew\nthird")
	s := &Source{Stdin: in, StdinIsTerminal: func() bool { return false }, StdinTarget: func() string { return "pipe" }}
	old, err := s.Once()
	if err != nil || string(old) != "old" {
		t.Fatalf("old: %q %v", old, err)
	}
	nw, err := s.Interactive(true)
	if err != nil || string(nw) != "new" {
		t.Fatalf("new: %q %v", nw, err)
	}
	rest, _ := io.ReadAll(in)
	if string(rest) != "third" {
		t.Errorf("rest %q", rest)
	}
}

func TestExtpassArgv(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{"echo test"}, []string{"echo", "test"}},
		{[]string{" a  b "}, []string{"a", "b"}},
		{[]string{"echo", "a b"}, []string{"echo", "a b"}},
	}
	for _, c := range cases {
		if got := ExtpassArgv(c.in); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("ExtpassArgv(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseMasterKey(t *testing.T) {
	good := "00010203-04050607-08090a0b-0c0d0e0f-10111213-14151617-18191a1b-1c1d1e1f"
	want := make([]byte, 32)
	for i := range want {
		want[i] = byte(i)
	}
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"dashed", good, true},
		{"plain", strings.ReplaceAll(good, "-", ""), true},
		{"dashes anywhere", "-0-0" + strings.ReplaceAll(good, "-", "")[2:] + "--", true},
		{"upper", strings.ToUpper(good), true},
		{"short", good[:len(good)-2], false},
		{"long", good + "00", false},
		{"bad hex", "zz" + good[2:], false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := ParseMasterKey(c.in)
			if !c.ok {
				if codeOf(err) != exitcodes.MasterKey {
					t.Fatalf("err %v, want code 14", err)
				}
				return
			}
			if err != nil || !bytes.Equal(k, want) {
				t.Fatalf("got %x %v", k, err)
			}
		})
	}
}

func TestMasterKeyFromStdin(t *testing.T) {
	key := strings.Repeat("ab", 32)
	s := &Source{Stdin: strings.NewReader(key + "\nmore"), StdinIsTerminal: func() bool { return false }}
	k, err := s.MasterKeyFromStdin()
	if err != nil || len(k) != 32 || k[0] != 0xab {
		t.Fatalf("pipe: %x %v", k, err)
	}
	ft := &fakeTerminal{answers: []string{key}}
	s = &Source{StdinIsTerminal: func() bool { return true }, Terminal: ft.read}
	if _, err := s.MasterKeyFromStdin(); err != nil || ft.prompts[0] != "Masterkey: " {
		t.Fatalf("terminal: %v %q", err, ft.prompts)
	}
	s = &Source{Stdin: strings.NewReader("nothex\n"), StdinIsTerminal: func() bool { return false }}
	if _, err := s.MasterKeyFromStdin(); codeOf(err) != exitcodes.MasterKey {
		t.Fatalf("bad key: %v", err)
	}
}

// codeOf is the exit code the command line gives err: the sentinel errors
// of this package map to 9 and 14.
func codeOf(err error) int {
	switch {
	case errors.Is(err, ErrMasterKey):
		return exitcodes.MasterKey
	case errors.Is(err, ErrPassword):
		return exitcodes.ReadPassword
	}
	return exitcodes.From(err)
}
