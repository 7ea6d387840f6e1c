package fusefrontend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
)

// TestLogsNameCiphertextPaths: warnings about damaged entries identify
// them by ciphertext path, never by plaintext names (logs go to syslog;
// the plaintext is what the filesystem protects).
func TestLogsNameCiphertextPaths(t *testing.T) {
	tf := mountFS(t, testConfig{})
	const secret = "PLAINSECRET"
	dir := secret + "dir"
	sub := dir + "/" + secret + "sub"
	if err := os.MkdirAll(tf.path(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path(dir+"/"+secret+"file"), []byte("x"))
	if err := unix.Setxattr(tf.path(dir+"/"+secret+"file"), "user."+secret, []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", tf.path(dir+"/"+secret+"link")); err != nil {
		t.Fatal(err)
	}
	enc := func(p string) string {
		c, err := tf.rn.EncryptPath(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cDir, cSub := enc(dir), enc(sub)
	cFile, cLink := enc(dir+"/"+secret+"file"), enc(dir+"/"+secret+"link")
	// Damage: an undecryptable name, a missing diriv, a bad symlink
	// target, a bad xattr value and an undecryptable xattr name.
	mustWrite(t, filepath.Join(tf.cipher, cDir, "not-base64!"), nil)
	if err := os.Remove(filepath.Join(tf.cipher, cSub, nametransform.DirIVFilename)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tf.cipher, cLink)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("garbage", filepath.Join(tf.cipher, cLink)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, err := unix.Listxattr(filepath.Join(tf.cipher, cFile), buf)
	if err != nil || n == 0 {
		t.Fatalf("backing xattrs: %v", err)
	}
	cAttr := strings.TrimRight(string(buf[:n]), "\x00")
	if err := unix.Setxattr(filepath.Join(tf.cipher, cFile), cAttr, []byte("garbagegarbagegarbagegarbagegarbage"), 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(tf.cipher, cFile), nametransform.XattrPrefix+"bad!", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	tf.rn.dirCache.clear()

	os.ReadDir(tf.path(dir))
	os.ReadDir(tf.path(sub))
	os.Readlink(tf.path(dir + "/" + secret + "link"))
	unix.Getxattr(tf.path(dir+"/"+secret+"file"), "user."+secret, buf)
	unix.Listxattr(tf.path(dir+"/"+secret+"file"), buf)

	logs := tf.logs.String()
	for _, want := range []string{"undecryptable name", "directory IV", "symlink target", "xattr value", "xattr name"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no warning about %q", want)
		}
	}
	if strings.Contains(logs, secret) {
		t.Errorf("plaintext names in the log:\n%s", logs)
	}
	for _, c := range []string{cDir, cSub, cLink, cFile} {
		if !strings.Contains(logs, c) {
			t.Errorf("ciphertext path %s not in the log:\n%s", c, logs)
		}
	}
}
