//go:build linux

package fsck_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fsck"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
)

// unreadableChildEnv, set to a CIPHERDIR, makes the test binary a child
// that runs the check there with -badname '*' and prints its result.
const unreadableChildEnv = "GOCRYPTFS_TEST_FSCK_UNREADABLE"

func TestMain(m *testing.M) {
	if dir := os.Getenv(unreadableChildEnv); dir != "" {
		os.Exit(unreadableChild(dir))
	}
	os.Exit(m.Run())
}

// unreadableChild checks dir (the filesystem of
// TestBadnameKeepsPermissionError) as the user it runs as.
func unreadableChild(dir string) int {
	c, err := fscore.New(testutil.MasterKey(), fscore.Options{Cipher: cryptocore.AESGCM, HKDF: true,
		Names: nametransform.Options{Raw64: true, BadnamePatterns: []string{"*"}}})
	if err != nil {
		fmt.Println(err)
		return 2
	}
	var kinds []string
	res, err := fsck.Check(context.Background(), fsck.Options{CipherDir: dir, NameTransform: c.NT, ContentEnc: c.CE,
		Report: func(p fsck.Problem) { kinds = append(kinds, p.Kind.String()) }})
	if err != nil {
		fmt.Println(err)
		return 2
	}
	fmt.Printf("skipped=%d corrupt=%d kinds=%s\n", res.Skipped, res.Corrupt, strings.Join(kinds, ","))
	return 0
}

// TestBadnameKeepsPermissionError: a long name whose companion file the
// checking user cannot read is skipped, also with -badname (which shows
// undecryptable names): the permission error must reach fsck, or the
// entry is reported as a corrupt name and -repair moves it away with its
// name lost. The check runs in a child as nobody, so that the permission
// is really missing (root reads anything).
func TestBadnameKeepsPermissionError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the check as another user")
	}
	f := newFS(t, variants[0])
	c := f.name(strings.Repeat("L", 200))
	if err := os.WriteFile(f.path(c), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.path(c)+".name", 0); err != nil {
		t.Fatal(err)
	}
	// nobody must reach the CIPHERDIR: open up its parents.
	for d := f.dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Nor can it run the test binary where go test put it.
	bin := filepath.Join(f.dir+".bin", "fsck.test")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), unreadableChildEnv+"="+f.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "skipped=1 corrupt=0 ") {
		t.Errorf("check as nobody: %s; want the entry skipped, not corrupt", got)
	}
}
