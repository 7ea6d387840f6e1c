package fido2_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/fido2"
)

// standIn puts the stand-in tools of testdata first on PATH and returns
// the log file they write to.
func standIn(t *testing.T) string {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", td+":"+os.Getenv("PATH"))
	log := filepath.Join(t.TempDir(), "log")
	t.Setenv("FIDO2_STANDIN_LOG", log)
	t.Setenv("FIDO2_STANDIN_FAIL", "")
	return log
}

func TestRegisterAndSecret(t *testing.T) {
	log := standIn(t)
	var stderr bytes.Buffer
	opts := fido2.Options{Stderr: &stderr}
	cred, err := fido2.Register("/dev/hidraw7", "mycipher", opts)
	if err != nil || len(cred) != 64 {
		t.Fatalf("Register = %x, %v (stderr %q)", cred, err, stderr.String())
	}
	salt := fido2.NewSalt()
	s1, err := fido2.Secret("/dev/hidraw7", cred, salt, []string{"up=true", "pin=false"}, opts)
	if err != nil || len(s1) != 32 {
		t.Fatalf("Secret = %x, %v", s1, err)
	}
	s2, err := fido2.Secret("/dev/hidraw7", cred, salt, nil, opts)
	if err != nil || !bytes.Equal(s1, s2) {
		t.Errorf("second Secret = %x, %v; want %x", s2, err, s1)
	}
	s3, err := fido2.Secret("/dev/hidraw7", cred, fido2.NewSalt(), nil, opts)
	if err != nil || bytes.Equal(s1, s3) {
		t.Errorf("Secret with another salt = %x, %v", s3, err)
	}
	b, _ := os.ReadFile(log)
	want := []string{
		"fido2-cred -M -h /dev/hidraw7",
		"cred-input rp=gocryptfs user=mycipher",
		"fido2-assert -G -h -t up=true -t pin=false /dev/hidraw7",
		"assert-input rp=gocryptfs",
		"fido2-assert -G -h /dev/hidraw7",
	}
	for _, w := range want {
		if !strings.Contains(string(b), w+"\n") {
			t.Errorf("log lacks %q:\n%s", w, b)
		}
	}
}

func TestFailures(t *testing.T) {
	standIn(t)
	cred := []byte("credential")
	for _, c := range []struct {
		fail string
		reg  bool
		msg  string
	}{
		{"cred", true, "fido2-cred failed"},
		{"assert", false, "fido2-assert failed"},
		{"short", false, "hmac-secret of 16 bytes"},
		{"zero", false, "all zero"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Setenv("FIDO2_STANDIN_FAIL", c.fail)
			var stderr bytes.Buffer
			opts := fido2.Options{Stderr: &stderr}
			var err error
			if c.reg {
				_, err = fido2.Register("dev", "u", opts)
			} else {
				_, err = fido2.Secret("dev", cred, fido2.NewSalt(), nil, opts)
			}
			if !errors.Is(err, fido2.ErrFIDO2) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want ErrFIDO2 containing %q", err, c.msg)
			}
		})
	}
}

func TestMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := fido2.Secret("dev", []byte("c"), fido2.NewSalt(), nil, fido2.Options{})
	if !errors.Is(err, fido2.ErrFIDO2) {
		t.Errorf("err = %v", err)
	}
}

func TestBadOutput(t *testing.T) {
	dir := t.TempDir()
	// A tool that prints too few lines, and one that prints junk.
	os.WriteFile(filepath.Join(dir, "fido2-cred"), []byte("#!/bin/sh\necho one\necho two\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "fido2-assert"), []byte("#!/bin/sh\nfor i in 1 2 3 4 5; do echo '***'; done\n"), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	if _, err := fido2.Register("dev", "u", fido2.Options{}); !errors.Is(err, fido2.ErrFIDO2) || !strings.Contains(err.Error(), "printed 2 lines") {
		t.Errorf("Register: %v", err)
	}
	if _, err := fido2.Secret("dev", []byte("c"), fido2.NewSalt(), nil, fido2.Options{}); !errors.Is(err, fido2.ErrFIDO2) || !strings.Contains(err.Error(), "invalid hmac-secret") {
		t.Errorf("Secret: %v", err)
	}
}
