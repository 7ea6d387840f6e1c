// Package fido2 obtains a FIDO2 hmac-secret from a security token with the
// command-line tools of libfido2 (docs/format.md 2.7, docs/cli.md sections 3 and 4).
// Register creates a credential with `fido2-cred -M -h DEVICE` when a
// filesystem is created, and Secret runs `fido2-assert -G -h [-t OPT]...
// DEVICE` to get the 32+ byte secret that replaces the password as scrypt
// input.
//
// The tools are found in $PATH and talk to the user themselves (PIN
// prompts on the terminal, "touch your token" messages on stderr); their
// stdin carries the request lines and their stdout the base64 results.
package fido2

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
)

// RelyingPartyID is the FIDO2 relying party every gocryptfs credential is
// bound to.
const RelyingPartyID = "gocryptfs"

// Tool names, looked up in $PATH.
const (
	CredTool   = "fido2-cred"
	AssertTool = "fido2-assert"
)

// MinSecretLen is the shortest hmac-secret accepted.
const MinSecretLen = 32

// randLen is the length of the random client data hash, user id and salt.
const randLen = 32

// ErrFIDO2 is wrapped by every error of this package: the token
// interaction failed (exit code 31 on the command line).
var ErrFIDO2 = errors.New("FIDO2 token interaction failed")

// Options configures Register and Secret.
type Options struct {
	// Stderr receives the tools' stderr; nil means os.Stderr.
	Stderr io.Writer
	// Logger receives the "interact with your device" notices and debug
	// messages; nil discards them.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func randB64() string {
	return base64.StdEncoding.EncodeToString(NewSalt())
}

// NewSalt returns 32 fresh random bytes, used as the hmac salt of a new
// filesystem.
func NewSalt() []byte {
	b := make([]byte, randLen)
	rand.Read(b) // never fails on Linux
	return b
}

// run executes tool with args, feeding it the input lines, and returns its
// raw stdout (which the caller wipes when it holds a secret).
func run(opts Options, input []string, tool string, args ...string) ([]byte, error) {
	cmd := exec.Command(tool, args...)
	cmd.Stdin = strings.NewReader(strings.Join(input, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = opts.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	opts.logger().Debug("fido2: running tool", "argv", cmd.Args)
	if err := cmd.Run(); err != nil {
		clear(out.Bytes())
		return nil, fmt.Errorf("%w: %s failed: %w", ErrFIDO2, tool, err)
	}
	return out.Bytes(), nil
}

// field decodes line i (0-based) of a tool's output as standard base64.
func field(out []byte, i int, tool, what string) ([]byte, error) {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(out) == 0 || len(lines) <= i {
		return nil, fmt.Errorf("%w: %s printed %d lines, expected the %s on line %d", ErrFIDO2, tool, len(lines), what, i+1)
	}
	line := bytes.TrimSpace(lines[i])
	b := make([]byte, base64.StdEncoding.DecodedLen(len(line)))
	n, err := base64.StdEncoding.Decode(b, line)
	if err != nil || n == 0 {
		clear(b)
		return nil, fmt.Errorf("%w: %s: invalid %s on line %d", ErrFIDO2, tool, what, i+1)
	}
	return b[:n], nil
}

// Register creates a new credential on the token at device for user name
// userName (the cipherdir's base name) and returns its credential id.
//
// fido2-cred -M reads: client data hash, relying party id, user name, user
// id; and prints: client data hash, relying party id, format,
// authenticator data, credential id, signature [, certificate].
func Register(device, userName string, opts Options) ([]byte, error) {
	opts.logger().Info("FIDO2 Register: interact with your device ...")
	out, err := run(opts, []string{randB64(), RelyingPartyID, userName, randB64()},
		CredTool, "-M", "-h", device)
	if err != nil {
		return nil, err
	}
	return field(out, 4, CredTool, "credential id")
}

// Secret asks the token at device for the hmac-secret of credentialID and
// salt, passing each of assertOptions as "-t OPTION", and returns it. The
// secret is at least MinSecretLen bytes and not all zero. The caller
// should wipe it after use.
//
// fido2-assert -G -h reads: client data hash, relying party id, credential
// id, hmac salt; and prints: client data hash, relying party id,
// authenticator data, signature, hmac-secret.
func Secret(device string, credentialID, salt []byte, assertOptions []string, opts Options) ([]byte, error) {
	opts.logger().Info("FIDO2 Secret: interact with your device ...")
	args := []string{"-G", "-h"}
	for _, o := range assertOptions {
		args = append(args, "-t", o)
	}
	args = append(args, device)
	out, err := run(opts, []string{
		randB64(), RelyingPartyID,
		base64.StdEncoding.EncodeToString(credentialID),
		base64.StdEncoding.EncodeToString(salt),
	}, AssertTool, args...)
	if err != nil {
		return nil, err
	}
	secret, err := field(out, 4, AssertTool, "hmac-secret")
	clear(out)
	if err != nil {
		return nil, err
	}
	if len(secret) < MinSecretLen {
		clear(secret)
		return nil, fmt.Errorf("%w: %s: hmac-secret of %d bytes, want at least %d", ErrFIDO2, AssertTool, len(secret), MinSecretLen)
	}
	var acc byte
	for _, b := range secret {
		acc |= b
	}
	if acc == 0 {
		return nil, fmt.Errorf("%w: %s: hmac-secret is all zero", ErrFIDO2, AssertTool)
	}
	return secret, nil
}
