package sync_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestInitWarnsSyncFolder: -init in a folder that Syncthing, Dropbox or
// Nextcloud syncs names the marker it found and the options to consider;
// elsewhere it says nothing of the kind.
func TestInitWarnsSyncFolder(t *testing.T) {
	for _, marker := range []string{"", ".stfolder", ".dropbox", "._sync_0123abcd.db"} {
		root := t.TempDir()
		if marker != "" {
			if err := os.WriteFile(filepath.Join(root, marker), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dir := filepath.Join(root, "sub", "cipher")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		r := testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, "-init", "-scryptn", "10", "-extpass", "echo test", dir)
		testutil.Expect(t, r, 0)
		warned := strings.Contains(r.Stderr, "sync tool") && strings.Contains(r.Stderr, "-longnamemax")
		if marker == "" && warned {
			t.Errorf("warning without a sync folder: %s", r.Stderr)
		}
		if marker != "" && (!warned || !strings.Contains(r.Stderr, marker)) {
			t.Errorf("marker %s: no warning naming it: %s", marker, r.Stderr)
		}
	}
}
