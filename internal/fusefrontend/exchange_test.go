//go:build linux

package fusefrontend

import (
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRenameExchangeLongNames exchanges entries with long (hashed) names on
// both sides, between directories, and a long with a short name: both
// names must stay valid in their directories (each keeps its long-name
// file), and a fresh mount must see the same tree.
func TestRenameExchangeLongNames(t *testing.T) {
	for _, v := range []struct {
		name string
		cfg  testConfig
	}{{"diriv", testConfig{}}, {"deterministic", testConfig{deterministic: true}}} {
		t.Run(v.name, func(t *testing.T) {
			tf := mountFS(t, v.cfg)
			l1, l2 := strings.Repeat("1", 200), strings.Repeat("2", 200)
			for _, d := range []string{"A", "B", "B/" + l2} {
				if err := os.Mkdir(tf.path(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, tf.path("A/"+l1), []byte("one"))
			mustWrite(t, tf.path("B/"+l2+"/inner"), []byte("inner"))
			mustWrite(t, tf.path("A/short"), []byte("short"))
			if err := unix.Renameat2(unix.AT_FDCWD, tf.path("A/"+l1), unix.AT_FDCWD, tf.path("B/"+l2), unix.RENAME_EXCHANGE); err != nil {
				t.Fatal(err)
			}
			if err := unix.Renameat2(unix.AT_FDCWD, tf.path("A/short"), unix.AT_FDCWD, tf.path("B/"+l2), unix.RENAME_EXCHANGE); err != nil {
				t.Fatal(err)
			}
			// Now: A/l1 = dir with inner, A/short = "one", B/l2 = "short".
			fresh := mountExisting(t, v.cfg, tf.cipher, false)
			for _, m := range []*testFS{tf, fresh} {
				want := map[string]string{"A/" + l1 + "/inner": "inner", "A/short": "one", "B/" + l2: "short"}
				for p, c := range want {
					if b, err := os.ReadFile(m.path(p)); err != nil || string(b) != c {
						t.Errorf("%s: %q, %v; want %q", p[:min(len(p), 20)], b, err, c)
					}
				}
				if got := listNames(t, m.path("A")); !slices.Equal(got, []string{l1, "short"}) {
					t.Errorf("A lists %d names %q", len(got), got)
				}
				if got := listNames(t, m.path("B")); !slices.Equal(got, []string{l2}) {
					t.Errorf("B lists %q", got)
				}
			}
			// Every hashed backing name has its companion and vice versa.
			for _, d := range []string{"A", "B"} {
				c, err := tf.rn.EncryptPath(d)
				if err != nil {
					t.Fatal(err)
				}
				names := tf.cipherEntries(t, c)
				for _, n := range names {
					if strings.HasPrefix(n, "gocryptfs.longname.") && !strings.HasSuffix(n, ".name") && !slices.Contains(names, n+".name") {
						t.Errorf("%s: %s has no .name file", d, n)
					}
					if base, ok := strings.CutSuffix(n, ".name"); ok && !slices.Contains(names, base) {
						t.Errorf("%s: orphaned %s", d, n)
					}
				}
			}
		})
	}
}
