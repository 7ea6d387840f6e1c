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
	s := &Source{Stdin: in}
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
