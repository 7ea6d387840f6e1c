package tools_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// dumpKey returns the master key unlocked with pw, or "" if pw is wrong.
func dumpKey(t *testing.T, dir, pw string) string {
	t.Helper()
	r := xray(t, pw+"\n", "-dumpmasterkey", filepath.Join(dir, "gocryptfs.conf"))
	switch r.Code {
	case 0:
		return strings.TrimSpace(r.Stdout)
	case 8:
		return ""
	}
	t.Fatalf("dumpmasterkey: %v", r)
	return ""
}

func TestPasswdChange(t *testing.T) {
	testutil.RequireFuse(t)
	dir := initFS(t)
	key := dumpKey(t, dir, "test")
	mnt := mountFS(t, dir)
	os.WriteFile(filepath.Join(mnt, "f"), []byte("content"), 0o644)
	testutil.UnmountDir(t, mnt)

	// Old password on line 1, new on line 2.
	r := testutil.Run(t, testutil.RunOptions{Stdin: "test\nnew\n"}, gocryptfsBin, "-passwd", dir)
	testutil.Expect(t, r, 0, "Password changed.")
	if k := dumpKey(t, dir, "new"); k != key {
		t.Errorf("new password unlocks %q, want the old master key %q", k, key)
	}
	if k := dumpKey(t, dir, "test"); k != "" {
		t.Error("the old password still unlocks the config")
	}
	m := testutil.NewDir(t, "mnt2")
	testutil.Expect(t, gocryptfs(t, "-extpass", "echo test", dir, m), 12, "Password incorrect.")
	r = gocryptfs(t, "-extpass", "echo new", dir, m)
	t.Cleanup(func() { testutil.UnmountDir(t, m) })
	testutil.Expect(t, r, 0)
	if b, err := os.ReadFile(filepath.Join(m, "f")); err != nil || string(b) != "content" {
		t.Errorf("read back %q, %v", b, err)
	}
	testutil.UnmountDir(t, m)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo new", dir), 0, "no problems found")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo test", dir), 12)

	// The old password may also come from -extpass; the new one from stdin.
	testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Stdin: "third\n"}, gocryptfsBin, "-passwd", "-extpass", "echo new", dir), 0)
	if k := dumpKey(t, dir, "third"); k != key {
		t.Errorf("third password unlocks %q", k)
	}
	// A wrong old password changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
	testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Stdin: "wrong\nfourth\n"}, gocryptfsBin, "-passwd", dir), 12)
	if after, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.conf")); !bytes.Equal(before, after) {
		t.Error("config changed after a wrong old password")
	}
}

// startPasswd runs -passwd with stdin and stdout as pipes.
func startPasswd(t *testing.T, args ...string) (*exec.Cmd, *os.File, *os.File) {
	t.Helper()
	cmd := exec.Command(gocryptfsBin, append([]string{"-passwd"}, args...)...)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		inW.Close()
		outR.Close()
	})
	return cmd, inW, outR
}

// TestPasswdKilledAtPrompt: killed while waiting for the new password
// (Ctrl-C, closed terminal), -passwd leaves the config untouched.
func TestPasswdKilledAtPrompt(t *testing.T) {
	dir := initFS(t)
	conf := filepath.Join(dir, "gocryptfs.conf")
	before, _ := os.ReadFile(conf)
	cmd, in, out := startPasswd(t, dir)
	in.Write([]byte("test\n"))
	readUntil(t, out, "Please enter your new password.", 30*time.Second)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if after, _ := os.ReadFile(conf); !bytes.Equal(before, after) {
		t.Error("config changed")
	}
	if _, err := os.Lstat(conf + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	if dumpKey(t, dir, "test") == "" {
		t.Error("old password no longer unlocks")
	}
}

// TestPasswdKilledAnytime kills -passwd at increasing delays while it
// derives the new key with expensive scrypt parameters and writes the
// config. Whatever the moment, the config on disk is complete and is
// unlocked by exactly one of the two passwords, to the same master key.
// A kill between writing the temporary file and renaming it leaves a
// stale .tmp; the next -passwd then refuses with a clear message (exit 24)
// until it is removed.
func TestPasswdKilledAnytime(t *testing.T) {
	dir := initFS(t)
	key := dumpKey(t, dir, "test")
	conf := filepath.Join(dir, "gocryptfs.conf")
	cur := "test"
	changed := 0
	delays := []time.Duration{0, 5, 10, 20, 40, 60, 80, 100, 130, 160, 200, 250, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 5000}
	for i, delay := range delays {
		if changed >= 2 {
			break // later kills come after the process finished anyway
		}
		next := fmt.Sprintf("pw%d", i)
		cmd, in, out := startPasswd(t, "-scryptn", "15", dir)
		in.Write([]byte(cur + "\n"))
		readUntil(t, out, "Please enter your new password.", 30*time.Second)
		in.Write([]byte(next + "\n"))
		time.Sleep(delay * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		kOld, kNew := dumpKey(t, dir, cur), dumpKey(t, dir, next)
		switch {
		case kOld != "" && kNew != "":
			t.Fatalf("delay %v: both passwords unlock", delay)
		case kOld == "" && kNew == "":
			data, _ := os.ReadFile(conf)
			t.Fatalf("delay %v: no password unlocks the config:\n%s", delay, data)
		case kNew != "":
			cur = next
			changed++
		}
		if k := kOld + kNew; k != key {
			t.Fatalf("delay %v: unlocked key %s, want %s", delay, k, key)
		}
		if _, err := os.Lstat(conf + ".tmp"); err == nil {
			t.Logf("delay %v: killed between write and rename, stale .tmp left", delay)
			r := testutil.Run(t, testutil.RunOptions{Stdin: cur + "\nother\n"}, gocryptfsBin, "-passwd", dir)
			testutil.Expect(t, r, 24, "gocryptfs.conf.tmp", "file exists")
			os.Remove(conf + ".tmp")
		}
	}
	if changed == 0 {
		t.Errorf("not even a %v delay let -passwd finish", delays[len(delays)-1])
	}
}

// TestPasswdStaleTmp: a leftover gocryptfs.conf.tmp (a crash after the
// temporary file was written) does not affect unlocking; -passwd refuses
// with a message naming the file (exit 24) and changes nothing.
func TestPasswdStaleTmp(t *testing.T) {
	testutil.RequireFuse(t)
	dir := initFS(t)
	conf := filepath.Join(dir, "gocryptfs.conf")
	before, _ := os.ReadFile(conf)
	half := before[:len(before)/2] // a half-written temporary file
	if err := os.WriteFile(conf+".tmp", half, 0o400); err != nil {
		t.Fatal(err)
	}
	r := testutil.Run(t, testutil.RunOptions{Stdin: "test\nnew\n"}, gocryptfsBin, "-passwd", dir)
	testutil.Expect(t, r, 24, conf+".tmp", "file exists")
	if after, _ := os.ReadFile(conf); !bytes.Equal(before, after) {
		t.Error("config changed")
	}
	if tmp, _ := os.ReadFile(conf + ".tmp"); !bytes.Equal(tmp, half) {
		t.Error("the stale .tmp was modified")
	}
	mountFS(t, dir) // the old password still works
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo test", dir), 0, "no problems found")
	os.Remove(conf + ".tmp")
	testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Stdin: "test\nnew\n"}, gocryptfsBin, "-passwd", dir), 0, "Password changed.")
	if dumpKey(t, dir, "new") == "" {
		t.Error("new password does not unlock after removing the stale .tmp")
	}
}
