package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// scryptN returns the "N=" value that -info reports.
func scryptN(t *testing.T, dir string) string {
	t.Helper()
	r := run(t, "-info", dir)
	testutil.Expect(t, r, 0)
	i := strings.Index(r.Stdout, " N=")
	return strings.Fields(r.Stdout[i+1:])[0]
}

func TestPasswd(t *testing.T) {
	dir := initFS(t)
	conf, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
	r := runWith(t, testutil.RunOptions{Stdin: "test\nnewpw\n"}, "-passwd", dir)
	testutil.Expect(t, r, 0, "Decrypting master key", "Please enter your new password.", "Password changed.")
	conf2, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
	if string(conf) == string(conf2) {
		t.Fatal("config unchanged")
	}
	if n := scryptN(t, dir); n != "N=1024" {
		t.Errorf("-passwd without -scryptn changed N: %s", n)
	}
	fi, _ := os.Stat(filepath.Join(dir, "gocryptfs.conf"))
	if fi.Mode().Perm() != 0o400 {
		t.Errorf("config mode %v", fi.Mode())
	}
	// Old password fails, new one works.
	testutil.RequireFuse(t)
	mnt := newDir(t)
	testutil.Expect(t, run(t, "-extpass", "echo test", dir, mnt), 12, "Password incorrect.")
	mountFS(t, dir, "-extpass", "echo newpw")
}

func TestPasswdOldFromExtpassNewFromStdin(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "second\n"}, "-passwd", "-extpass", "echo test", "-scryptn", "11", dir), 0, "Password changed.")
	if n := scryptN(t, dir); n != "N=2048" {
		t.Errorf("-scryptn 11 not applied: %s", n)
	}
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "third\n"}, "-passwd", "-passfile", passfile(t, "second"), dir), 0)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "x\n"}, "-passwd", "-passfile", passfile(t, "second"), dir), 12)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "x\n"}, "-passwd", "-passfile", passfile(t, "third"), dir), 0)
}

func TestPasswdErrors(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "wrong\nnew\n"}, "-passwd", dir), 12, "Password incorrect.")
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\nnew\n"}, "-passwd", "-scryptn", "9", dir), 13)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\n\n"}, "-passwd", dir), 9)
	// A stale temporary file makes the write fail with 24.
	tmp := filepath.Join(dir, "gocryptfs.conf.tmp")
	os.WriteFile(tmp, nil, 0o600)
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\nnew\n"}, "-passwd", dir), 24)
	os.Remove(tmp)
	// Missing config: 11.
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\nnew\n"}, "-passwd", newDir(t)), 11, "Cannot open config file")
}

func TestPasswdMasterkey(t *testing.T) {
	key := strings.Repeat("ab", 32)
	dir := newDir(t)
	testutil.Expect(t, run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-masterkey", key, dir), 0)
	conf := filepath.Join(dir, "gocryptfs.conf")
	r := runWith(t, testutil.RunOptions{Stdin: "reset\n"}, "-passwd", "-masterkey", key, dir)
	testutil.Expect(t, r, 0, `A copy of the old config file has been created at "`+conf+`.bak".`, "Password changed.")
	if _, err := os.Stat(conf + ".bak"); err != nil {
		t.Fatal(err)
	}
	// The .bak exists now, so a second reset cannot create it: 7.
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "again\n"}, "-passwd", "-masterkey", key, dir), 7)
	// The new password unlocks the key.
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "reset\nfinal\n"}, "-passwd", dir), 0)
}

func TestPasswdFIDO2(t *testing.T) {
	dir := initFS(t)
	conf := filepath.Join(dir, "gocryptfs.conf")
	data, _ := os.ReadFile(conf)
	s := strings.Replace(string(data), `"Raw64"`, `"Raw64",
		"FIDO2"`, 1)
	s = strings.Replace(s, `"Version": 2,`, `"Version": 2,
	"FIDO2": {"CredentialID": "AAAA", "HMACSalt": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "AssertOptions": null},`, 1)
	os.Chmod(conf, 0o600)
	if err := os.WriteFile(conf, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.Expect(t, run(t, "-info", dir), 0, "FIDO2")
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "test\nnew\n"}, "-passwd", dir), 1)
}
