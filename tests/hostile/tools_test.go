package hostile_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// xrayCases: gocryptfs-xray inspecting the attacked f.txt (as a user
// would run it on a file of CIPHERDIR): exit code and a line of output.
var xrayCases = []struct {
	attack
	code int
	want string
}{
	// A symlink is followed (the user named the path); only header and
	// nonces are printed, nothing decrypted.
	{symlinkedFile, 0, "Header: Version: 2"},
	{fifoFile, 1, "not a regular file"},
	{charDevFile, 1, "not a regular file"},
	{blockDevFile, 1, "not a regular file"},
	{hardLinkOut, 0, "Header: Version: 2"},
	{truncatedHeader, 1, "incomplete file header: read 10 bytes, want 18"},
	{truncatedBlock, 1, "corrupt block: truncated data, len=20"},
}

// TestXray inspects each attacked file: it finishes, answers as the
// table says, and prints no plaintext.
func TestXray(t *testing.T) {
	for _, c := range xrayCases {
		harness(t, c.attack, func(t *testing.T, f *fixture) {
			r := xray(t, "", f.abs("f.txt"))
			expect(t, "gocryptfs-xray", r, c.code, c.want)
			noSecretIn(t, "gocryptfs-xray", r.Stdout+r.Stderr)
			if strings.Contains(r.Stdout+r.Stderr, insidePlain) {
				t.Errorf("gocryptfs-xray printed plaintext: %v", r)
			}
		})
	}
}

// ctlsockCases: the control socket of a mount of the attacked
// CIPHERDIR, asked to decrypt a ciphertext path and to encrypt a
// plaintext path that both run through the attacked entry. An answer
// that needs the planted entry must be an error (xray exits 1 and names
// the line), never a name computed from what lies outside CIPHERDIR.
var ctlsockCases = []struct {
	attack
	// decrypt is the ciphertext path to ask for (relative to CIPHERDIR),
	// from the fixture; encrypt the plaintext path.
	decrypt    func(f *fixture) string
	encrypt    string
	decryptErr bool
	encryptErr bool
}{
	// The outside directory's entry, reached through the symlink: must
	// not decrypt with the outside IV.
	{symlinkedDir, func(f *fixture) string { return f.enc["d"] + "/" + f.outsideEncInner }, "d/new", true, true},
	{symlinkedDirIV, func(f *fixture) string { return f.enc["d/inner.txt"] }, "d/new", true, true},
	{fifoDirIV, func(f *fixture) string { return f.enc["d/inner.txt"] }, "d/new", true, true},
	{charDevDirIV, func(f *fixture) string { return f.enc["d/inner.txt"] }, "d/new", true, true},
	{hugeDirIV, func(f *fixture) string { return f.enc["d/inner.txt"] }, "d/new", true, true},
	{symlinkedRootDirIV, func(f *fixture) string { return f.enc["f.txt"] }, "new", true, true},
	{fifoRootDirIV, func(f *fixture) string { return f.enc["f.txt"] }, "new", true, true},
	// A long name decrypts through its .name file; encrypting needs only
	// the hash.
	{symlinkedLongName, func(f *fixture) string { return f.enc[longPlain] }, longPlain, true, false},
	{fifoLongName, func(f *fixture) string { return f.enc[longPlain] }, longPlain, true, false},
	{charDevLongName, func(f *fixture) string { return f.enc[longPlain] }, longPlain, true, false},
	{hugeLongName, func(f *fixture) string { return f.enc[longPlain] }, longPlain, true, false},
}

// TestCtlsock mounts each attacked CIPHERDIR with -ctlsock and asks
// gocryptfs-xray to translate paths through the attacked entries.
func TestCtlsock(t *testing.T) {
	for _, c := range ctlsockCases {
		harness(t, c.attack, func(t *testing.T, f *fixture) {
			sock := filepath.Join(t.TempDir(), "ctl.sock")
			mnt, _, r := mountWithin(t, f.cipher, append(pw, "-ctlsock", sock)...)
			if mnt == "" {
				t.Fatalf("mount failed: %v", r)
			}
			dec := c.decrypt(f)
			for _, q := range []struct {
				flag, in string
				wantErr  bool
			}{{"-decrypt-paths", dec, c.decryptErr}, {"-encrypt-paths", c.encrypt, c.encryptErr}} {
				r := xray(t, q.in+"\n", q.flag, sock)
				noSecretIn(t, q.flag, r.Stdout+r.Stderr)
				if q.wantErr {
					expect(t, q.flag+" "+q.in, r, 1, "error at input line 1")
					if r.Stdout != "" {
						t.Errorf("%s %s: answered %q", q.flag, q.in, r.Stdout)
					}
				} else {
					expect(t, q.flag+" "+q.in, r, 0)
				}
			}
		})
	}
}
