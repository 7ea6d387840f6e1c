package sync_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// need returns the path of a program the test requires; install-deps.bash --test
// installs them, so a missing one is a failure, not a skip.
func need(t *testing.T, prog string) string {
	t.Helper()
	for _, dir := range []string{"", "/usr/sbin/", "/usr/bin/"} {
		if p, err := exec.LookPath(dir + prog); err == nil {
			return p
		}
	}
	t.Fatalf("%s not installed (./install-deps.bash --test installs it)", prog)
	return ""
}

// startSSHD runs this machine's sshd on 127.0.0.1 only, on a free
// non-default port, accepting only a freshly generated key. It returns the
// port and the client key file; sshd is stopped in t.Cleanup.
func startSSHD(t *testing.T) (port int, key string) {
	t.Helper()
	sshd := need(t, "sshd")
	keygen := need(t, "ssh-keygen")
	dir := t.TempDir()
	hostKey := filepath.Join(dir, "host_ed25519")
	key = filepath.Join(dir, "client_ed25519")
	for _, k := range []string{hostKey, key} {
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	auth := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(auth, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd's privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	port = freePort(t)
	conf := filepath.Join(dir, "sshd_config")
	cfg := fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PidFile %s
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
X11Forwarding no
AllowTcpForwarding no
Subsystem sftp internal-sftp
`, port, hostKey, auth, filepath.Join(dir, "sshd.pid"))
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", conf)
	var logs testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	waitListening(t, port, "sshd", &logs)
	return port, key
}

// waitListening waits until something accepts connections on
// 127.0.0.1:port, or fails the test with what (the server's name) and
// its log.
func waitListening(t *testing.T, port int, what string, logs fmt.Stringer) {
	t.Helper()
	up := testutil.WaitFor(10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if !up {
		t.Fatalf("%s did not start listening: %s", what, logs.String())
	}
}

// mountSSHFS mounts remoteDir of this machine through the local sshd on
// a new directory and returns it; unmounted in t.Cleanup.
func mountSSHFS(t *testing.T, port int, key, remoteDir string) string {
	t.Helper()
	sshfs := need(t, "sshfs")
	mnt := testutil.NewDir(t, "sshfs")
	out, err := exec.Command(sshfs, "-p", fmt.Sprint(port),
		"-o", "IdentityFile="+key,
		"-o", "IdentitiesOnly=yes",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null",
		"-o", "LogLevel=ERROR",
		"root@127.0.0.1:"+remoteDir, mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("sshfs: %v: %s", err, out)
	}
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	if !testutil.IsMounted(mnt) {
		t.Fatalf("sshfs exited 0 but %s is not mounted", mnt)
	}
	return mnt
}

// TestSharedStorageSSHFS repeats the concurrent-writes test with CIPHERDIR
// on sshfs (one sshfs mount, two gocryptfs mounts on it), and checks that
// the mount warns that sshfs does not pass locks between machines.
func TestSharedStorageSSHFS(t *testing.T) {
	testutil.RequireFuse(t)
	port, key := startSSHD(t)
	backing := testutil.NewDir(t, "backing")
	mnt := mountSSHFS(t, port, key, backing)
	cipherdir := filepath.Join(mnt, "cipher")
	if err := os.Mkdir(cipherdir, 0o700); err != nil {
		t.Fatal(err)
	}
	r := testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, "-init", "-scryptn", "10", "-extpass", "echo test", cipherdir)
	testutil.Expect(t, r, 0)
	if out := r.Stdout + r.Stderr; !strings.Contains(out, "network filesystem (fuse.sshfs)") || !strings.Contains(out, "-sharedstorage") {
		t.Errorf("-init on sshfs: no network filesystem note: %v", r)
	}
	plain := testutil.NewDir(t, "warnmnt")
	r = testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, "-extpass", "echo test", "-sharedstorage", cipherdir, plain)
	testutil.Expect(t, r, 0)
	testutil.UnmountDir(t, plain)
	if !strings.Contains(r.Stderr, "does not pass byte-range locks between machines") {
		t.Errorf("-sharedstorage on sshfs: no lock warning: %s", r.Stderr)
	}
	concurrentWrites(t, cipherdir)
}
