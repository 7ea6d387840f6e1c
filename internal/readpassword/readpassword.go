// Package readpassword obtains passwords and master keys from the sources of
// docs/cli.md section 4: -passfile, -extpass, a non-terminal stdin and the
// terminal, in that order of precedence, plus the -masterkey hex format.
//
// All inputs (stdin, the "is a terminal" test, the terminal prompt) are
// injectable so the precedence rules can be tested without a terminal.
// Every error returned wraps ErrPassword, except master key errors, which
// wrap ErrMasterKey, and passwords longer than MaxPasswordLen from
// -passfile, -extpass or the terminal, which wrap ErrTooLong (the command
// line maps them to exit codes 9, 14 and 9). Callers own the returned byte
// slices and should wipe them after use.
package readpassword

import (
	"bytes"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// ErrPassword is wrapped by every failure to obtain a password.
var ErrPassword = errors.New("cannot read the password")

// ErrMasterKey is wrapped by every failure to obtain or parse a master key.
var ErrMasterKey = errors.New("invalid master key")

// kindError marks err as one of the sentinel errors above without
// changing its message.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// MaxPasswordLen is the longest accepted password in bytes.
const MaxPasswordLen = 2048

// ErrTooLong is wrapped by the errors for passwords longer than
// MaxPasswordLen. It carries no exit code: main maps it to exit code 9.
var ErrTooLong = errors.New("password is too long")

// MasterKeyLen is the length of a master key in bytes.
const MasterKeyLen = 32

// Source describes where passwords come from. The zero value reads from the
// real stdin/terminal.
type Source struct {
	// Passfiles are the -passfile arguments; their first lines are concatenated.
	Passfiles []string
	// Extpass are the -extpass arguments (one: split on spaces; several: argv).
	Extpass []string

	// Stdin is read byte by byte when it is not a terminal; nil means os.Stdin.
	// When it is an *os.File it is also handed to the extpass program, and
	// when that file is a terminal the password is read from it without
	// echo (prompt on os.Stderr); any other reader is no terminal.
	Stdin io.Reader
	// Stderr receives the extpass program's stderr; nil means os.Stderr.
	Stderr io.Writer
	// Logger receives informational messages and warnings; nil discards.
	Logger *slog.Logger

	// hooks are the tests' seams; empty in the release build (hooks.go).
	hooks testHooks
}

func (s *Source) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Source) stdin() io.Reader {
	if s.Stdin == nil {
		return os.Stdin
	}
	return s.Stdin
}

// stdinFile is stdin if it is a file.
func (s *Source) stdinFile() (*os.File, bool) {
	f, ok := s.stdin().(*os.File)
	return f, ok && f != nil
}

func (s *Source) isTerminal() bool {
	if isTerm, set := s.hooks.stdinIsTerminal(); set {
		return isTerm
	}
	f, ok := s.stdinFile()
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminal prints prompt and reads one line from the terminal on stdin
// without echo. Call it only when isTerminal.
func (s *Source) terminal(prompt string) ([]byte, error) {
	if pw, err, set := s.hooks.terminal(prompt); set {
		return pw, err
	}
	f, ok := s.stdinFile()
	if !ok {
		return nil, errors.New("reading from terminal: stdin is no terminal")
	}
	fmt.Fprint(os.Stderr, prompt)
	pw, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return nil, fmt.Errorf("reading from terminal: %w", err)
	}
	return pw, nil
}

func fail(err error) error { return &kindError{ErrPassword, err} }

func failKey(err error) error { return &kindError{ErrMasterKey, err} }

// Once returns the password used to unlock an existing filesystem:
// -passfile, else -extpass, else one stdin line if stdin is not a terminal,
// else one terminal prompt.
func (s *Source) Once() ([]byte, error) {
	switch {
	case len(s.Passfiles) > 0:
		return s.fromPassfiles()
	case len(s.Extpass) > 0:
		return s.fromExtpass()
	}
	return s.Interactive(false)
}

// Twice returns a new password for -init: -passfile, else -extpass, else one
// stdin line, else the terminal twice (the two entries must match).
func (s *Source) Twice() ([]byte, error) {
	if len(s.Passfiles) > 0 || len(s.Extpass) > 0 {
		return s.Once()
	}
	return s.Interactive(true)
}

// Interactive reads one line from stdin when stdin is not a terminal, or
// prompts on the terminal (twice when repeat is set). -passwd uses it for the
// new password, which never comes from -passfile/-extpass.
func (s *Source) Interactive(repeat bool) ([]byte, error) {
	if !s.isTerminal() {
		return s.fromStdin()
	}
	pw, err := s.fromTerminal("Password: ")
	if err != nil || !repeat {
		return pw, err
	}
	pw2, err := s.fromTerminal("Repeat: ")
	if err != nil {
		wipe(pw)
		return nil, err
	}
	defer wipe(pw2)
	if subtle.ConstantTimeCompare(pw, pw2) != 1 {
		wipe(pw)
		return nil, fail(errors.New("passwords do not match"))
	}
	return pw, nil
}

func (s *Source) fromTerminal(prompt string) ([]byte, error) {
	pw, err := s.terminal(prompt)
	if err != nil {
		return nil, fail(err)
	}
	if len(pw) == 0 {
		return nil, fail(errors.New("password is empty"))
	}
	if len(pw) > MaxPasswordLen {
		wipe(pw)
		return nil, fmt.Errorf("%w (max %d bytes)", ErrTooLong, MaxPasswordLen)
	}
	return pw, nil
}

func (s *Source) stdinTarget() string {
	if target, set := s.hooks.stdinTarget(); set {
		return target
	}
	f, ok := s.stdinFile()
	if !ok {
		return "?"
	}
	t, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return "?"
	}
	return t
}

// fromStdin reads one line byte by byte so that whatever follows the first
// newline stays unread for the next caller (-passwd reads two lines).
func (s *Source) fromStdin() ([]byte, error) {
	s.logger().Info(fmt.Sprintf("Reading Password from stdin (connected to %q)", s.stdinTarget()))
	pw, err := readLine(s.stdin(), MaxPasswordLen)
	if err != nil {
		return nil, fail(fmt.Errorf("reading password from stdin: %w", err))
	}
	if len(pw) == 0 {
		return nil, fail(errors.New("got empty Password from stdin"))
	}
	return pw, nil
}

// readLine reads single bytes up to the first '\n' or EOF. The newline is
// dropped; everything else, including a '\r', is kept verbatim (docs/cli.md 4).
// Lines longer than max bytes are an error.
func readLine(r io.Reader, max int) ([]byte, error) {
	buf := make([]byte, 0, 64)
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			if len(buf) >= max {
				wipe(buf)
				return nil, fmt.Errorf("line is longer than %d bytes", max)
			}
			buf = append(buf, b[0])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			wipe(buf)
			return nil, err
		}
	}
	return buf, nil
}

// firstLine splits data into its first line (without the '\n', otherwise
// verbatim) and whether anything follows it.
func firstLine(data []byte) (line []byte, rest bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return data, false
	}
	return data[:i], len(data) > i+1
}

func (s *Source) fromPassfiles() ([]byte, error) {
	var pw []byte
	for _, f := range s.Passfiles {
		data, err := readHead(f, MaxPasswordLen+2)
		if err != nil {
			wipe(pw)
			return nil, fail(fmt.Errorf("fatal: reading from passfile: %w", err))
		}
		line, rest := firstLine(data)
		if len(line) > MaxPasswordLen {
			wipe(data)
			wipe(pw)
			return nil, fmt.Errorf("fatal: passfile %q: %w (max %d bytes)", f, ErrTooLong, MaxPasswordLen)
		}
		if len(line) == 0 {
			wipe(data)
			wipe(pw)
			return nil, fail(fmt.Errorf("fatal: passfile %q: password is empty", f))
		}
		if rest {
			s.logger().Warn(fmt.Sprintf("passfile %q: ignoring everything after the first line", f))
		}
		pw = append(pw, line...)
		wipe(data)
	}
	if len(pw) > MaxPasswordLen {
		wipe(pw)
		return nil, fmt.Errorf("fatal: password from passfile: %w (max %d bytes)", ErrTooLong, MaxPasswordLen)
	}
	return pw, nil
}

// readHead reads at most n bytes from the start of the file path. A
// passfile may be anything the user names, /dev/zero or a FIFO that never
// ends included, and only its first line of at most MaxPasswordLen bytes
// matters: reading more would only let it exhaust memory.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	if err != nil {
		wipe(buf)
		return nil, err
	}
	return buf[:m], nil
}

// ExtpassArgv turns the -extpass arguments into an argv: a single argument
// is split on spaces, several are used verbatim.
func ExtpassArgv(extpass []string) []string {
	if len(extpass) != 1 {
		return extpass
	}
	var argv []string
	for _, p := range strings.Split(extpass[0], " ") {
		if p != "" {
			argv = append(argv, p)
		}
	}
	return argv
}

func (s *Source) fromExtpass() ([]byte, error) {
	argv := ExtpassArgv(s.Extpass)
	if len(argv) == 0 {
		return nil, fail(errors.New("extpass: empty command"))
	}
	s.logger().Info(fmt.Sprintf("Reading password from extpass program %q, arguments: %q", argv[0], argv[1:]))
	cmd := exec.Command(argv[0], argv[1:]...)
	// Only a real file is handed down: a pipe copier goroutine would steal
	// bytes that -passwd still needs to read from stdin.
	if f, ok := s.stdin().(*os.File); ok {
		cmd.Stdin = f
	}
	cmd.Stderr = s.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: MaxPasswordLen + 2}
	err := cmd.Run()
	defer wipe(out.Bytes())
	if err != nil {
		return nil, fail(fmt.Errorf("extpass program returned an error: %w", err))
	}
	line, _ := firstLine(out.Bytes())
	if len(line) == 0 {
		return nil, fail(errors.New("extpass: password is empty"))
	}
	if len(line) > MaxPasswordLen {
		return nil, fmt.Errorf("extpass: %w (max %d bytes)", ErrTooLong, MaxPasswordLen)
	}
	return bytes.Clone(line), nil
}

// limitedWriter keeps the first n bytes and silently discards the rest, so a
// chatty program can neither block nor make us buffer unbounded output.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.n -= k
	}
	return len(p), nil
}

// ParseMasterKey decodes a -masterkey value: 64 hex digits, with '-'
// separators allowed anywhere. Errors wrap ErrMasterKey.
func ParseMasterKey(s string) ([]byte, error) {
	h := strings.ReplaceAll(strings.TrimSpace(s), "-", "")
	key, err := hex.DecodeString(h)
	if err != nil {
		return nil, failKey(fmt.Errorf("could not parse master key: %w", err))
	}
	if len(key) != MasterKeyLen {
		wipe(key)
		return nil, failKey(
			fmt.Errorf("master key has length %d but we require length %d", len(key), MasterKeyLen))
	}
	return key, nil
}

// MasterKeyFromStdin implements -masterkey=stdin: the key is read from the
// terminal (prompt "Masterkey: ", no echo) or as one line from stdin.
func (s *Source) MasterKeyFromStdin() ([]byte, error) {
	var line []byte
	var err error
	if s.isTerminal() {
		line, err = s.terminal("Masterkey: ")
	} else {
		line, err = readLine(s.stdin(), 4*MaxPasswordLen)
	}
	if err != nil {
		return nil, failKey(fmt.Errorf("reading master key: %w", err))
	}
	defer wipe(line)
	return ParseMasterKey(string(line))
}

func wipe(b []byte) { clear(b) }
