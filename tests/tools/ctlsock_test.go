package tools_test

import (
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// cipherTree lists every backing path below dir that stands for a
// plaintext entry (no config, diriv or .name files).
func cipherTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b := d.Name()
		if rel == "." || b == "gocryptfs.diriv" || b == "gocryptfs.conf" || strings.HasSuffix(b, ".name") {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// checkNamesOnDisk fails the test unless the ciphertext paths that the
// control socket gave (enc's values) are exactly the entries below dir.
func checkNamesOnDisk(t *testing.T, dir string, enc map[string]string) {
	t.Helper()
	encList := slices.Sorted(maps.Values(enc))
	if disk := cipherTree(t, dir); !slices.Equal(disk, encList) {
		t.Errorf("names on disk:\n%q\nencrypted by ctlsock:\n%q", disk, encList)
	}
}

// TestCtlsockMatchesDisk: for a fresh filesystem in several naming modes,
// -encrypt-paths gives exactly the names on disk, and -decrypt-paths of
// every name on disk gives back the plaintext paths.
func TestCtlsockMatchesDisk(t *testing.T) {
	for _, flags := range [][]string{nil, {"-deterministic-names"}, {"-plaintextnames"}, {"-longnamemax", "62"}, {"-xchacha"}} {
		t.Run(strings.Join(append([]string{"default"}, flags...), " "), func(t *testing.T) {
			testutil.RequireFuse(t)
			dir := initFS(t, flags...)
			sock := filepath.Join(t.TempDir(), "ctl.sock")
			mnt := mountFS(t, dir, "-ctlsock", sock)
			plain := populate(t, mnt)
			enc := cipherPaths(t, sock, plain)
			checkNamesOnDisk(t, dir, enc)
			long := "dir1/" + strings.Repeat("L", 200)
			if len(flags) == 0 && !strings.HasPrefix(filepath.Base(enc[long]), "gocryptfs.longname.") {
				t.Errorf("long name encrypted to %q, want the hashed form", enc[long])
			}
			if slices.Contains(flags, "-plaintextnames") && enc[long] != long {
				t.Errorf("plaintextnames: %q -> %q", long, enc[long])
			}
			// Decrypt every name on disk.
			disk := cipherTree(t, dir)
			r := xray(t, strings.Join(disk, "\n")+"\n", "-decrypt-paths", sock)
			testutil.Expect(t, r, 0)
			got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			for i, c := range disk {
				var want string
				for p, e := range enc {
					if e == c {
						want = p
					}
				}
				if i >= len(got) || got[i] != want {
					t.Errorf("-decrypt-paths %q: got %q, want %q", c, got, want)
					break
				}
			}
			// -0 gives the same answers.
			r0 := xray(t, strings.Join(plain, "\x00"), "-encrypt-paths", "-0", sock)
			testutil.Expect(t, r0, 0)
			if r0.Stdout != strings.Join(lookup(enc, plain), "\x00")+"\x00" {
				t.Errorf("-0 output %q", r0.Stdout)
			}
		})
	}
}

func lookup(m map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// TestCtlsockVector: names of the v1.3 and v2.2-deterministic-names
// reference vectors, and the error/warning lines of docs/cli.md 8/9.
func TestCtlsockVector(t *testing.T) {
	testutil.RequireFuse(t)
	for _, v := range []string{"v1.3", "v2.2-deterministic-names", "v0.9"} {
		t.Run(v, func(t *testing.T) {
			dir := testutil.CopyCipherVector(t, v)
			sock := filepath.Join(t.TempDir(), "ctl.sock")
			mountFS(t, dir, "-ctlsock", sock)
			long := testutil.VectorLongName
			enc := cipherPaths(t, sock, []string{"status.txt", "rel", "abs", long})
			checkNamesOnDisk(t, dir, enc)
			r := xray(t, enc["status.txt"]+"\n/"+enc["rel"]+"\nnonexist/abc\n/\n", "-decrypt-paths", sock)
			testutil.Expect(t, r, 1)
			if r.Stdout != "status.txt\nrel\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
			wantErr := `warning at input line 2 "/` + enc["rel"] + `": Non-canonical input path '/` + enc["rel"] + `' has been interpreted as '` + enc["rel"] + `'.` + "\n" +
				`error at input line 3 "nonexist/abc": errno -1: bad message` + "\n" +
				`error at input line 4 "/": errno -1: empty input after canonicalization` + "\n"
			if r.Stderr != wantErr {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, wantErr)
			}
		})
	}
}

// waitFor polls cond for up to 20 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testutil.WaitFor(20*time.Second, cond) {
		t.Fatalf("timeout waiting for %s", what)
	}
}

func isSocket(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// TestCtlsockLifecycle: the socket exists while the password is being
// asked for (requests wait until the filesystem is up), answers while
// mounted, and is removed on unmount.
func TestCtlsockLifecycle(t *testing.T) {
	testutil.RequireFuse(t)
	dir := initFS(t)
	mnt := testutil.NewDir(t, "mnt")
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	cmd := exec.Command(gocryptfsBin, "-fg", "-ctlsock", sock, dir, mnt)
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		testutil.UnmountDir(t, mnt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	waitFor(t, "the control socket", func() bool { return isSocket(sock) })
	if testutil.IsMounted(mnt) {
		t.Fatal("mounted before the password was given")
	}
	// A client may connect already; its request is answered once mounted.
	answer := make(chan testutil.Result, 1)
	go func() { answer <- xray(t, "a\n", "-encrypt-paths", sock) }()
	time.Sleep(200 * time.Millisecond)
	stdin.Write([]byte(testutil.Password + "\n"))
	stdin.Close()
	// Ready, not only in the mount table: an unmount before the daemon
	// finished mounting fails the mount (exit 19), rightly.
	waitFor(t, "the mount", func() bool { return strings.Contains(out.String(), "mounted and ready") })
	select {
	case r := <-answer:
		testutil.Expect(t, r, 0)
		if len(strings.TrimSpace(r.Stdout)) != 22 {
			t.Errorf("answer %q", r.Stdout)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer from the control socket")
	}
	testutil.UnmountDir(t, mnt)
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("gocryptfs exited with %v after unmount; output:\n%s", waitErr, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("gocryptfs did not exit after unmount")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still exists after unmount: %v", err)
	}
}

// TestCtlsockPathChecks: a stale socket is replaced; a live socket, a
// regular file or an unusable directory make the mount fail with exit 20,
// before any password is read.
func TestCtlsockPathChecks(t *testing.T) {
	testutil.RequireFuse(t)
	dir := initFS(t)
	tmp := t.TempDir()

	stale := filepath.Join(tmp, "stale")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	mnt := mountFS(t, dir, "-ctlsock", stale)
	testutil.Expect(t, xray(t, "a\n", "-encrypt-paths", stale), 0)
	testutil.UnmountDir(t, mnt)

	live := filepath.Join(tmp, "live")
	l2, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	for _, p := range []string{live, file, filepath.Join(tmp, "nonexistent-dir", "sock")} {
		m := testutil.NewDir(t, "mnt")
		// No password source: the socket check must fail before stdin is read.
		r := testutil.Run(t, testutil.RunOptions{Stdin: ""}, gocryptfsBin, "-fg", "-ctlsock", p, dir, m)
		testutil.Expect(t, r, 20, "control socket")
		if testutil.IsMounted(m) {
			testutil.UnmountDir(t, m)
			t.Errorf("%s: mounted anyway", p)
		}
	}
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the regular file was touched: %v", err)
	}
}

// TestCtlsockReverse: the reverse view answers like the reverse frontend
// computes (TV-14 style names are deterministic).
func TestCtlsockReverse(t *testing.T) {
	testutil.RequireFuse(t)
	plain := testutil.NewDir(t, "plain")
	os.WriteFile(filepath.Join(plain, "hello.txt"), []byte("hello world\n"), 0o644)
	os.Mkdir(filepath.Join(plain, "dir1"), 0o755)
	os.WriteFile(filepath.Join(plain, "dir1", "file.txt"), []byte("abc"), 0o644)
	testutil.Expect(t, gocryptfs(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test",
		"-masterkey=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", plain), 0)
	mnt := testutil.NewDir(t, "mnt")
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	r := gocryptfs(t, "-reverse", "-q", "-extpass", "echo test", "-ctlsock", sock, plain, mnt)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	testutil.Expect(t, r, 0)
	// TV-14: names depend only on the master key and the path.
	enc := cipherPaths(t, sock, []string{"hello.txt", "dir1", "dir1/file.txt"})
	want := map[string]string{
		"hello.txt":     "F8rwmoCL-WWYHyKmxirgkg",
		"dir1":          "7s5GSiP46Ev-749M2p4GuA",
		"dir1/file.txt": "7s5GSiP46Ev-749M2p4GuA/LUBtDMqIDF6AIgI9Cpq3Tg",
	}
	for p, w := range want {
		if enc[p] != w {
			t.Errorf("%s -> %q, want %q", p, enc[p], w)
		}
		if _, err := os.Lstat(filepath.Join(mnt, w)); err != nil {
			t.Errorf("%s not in the view: %v", w, err)
		}
	}
	rd := xray(t, "7s5GSiP46Ev-749M2p4GuA/LUBtDMqIDF6AIgI9Cpq3Tg\n", "-decrypt-paths", sock)
	testutil.Expect(t, rd, 0)
	if rd.Stdout != "dir1/file.txt\n" {
		t.Errorf("decrypt: %q", rd.Stdout)
	}
}
