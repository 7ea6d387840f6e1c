package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TreeSum hashes the path, mode, size, link count and mtime of every entry
// below dir, with the contents of regular files, symlink targets and the
// xattrs of files and directories: equal sums before and after a run prove
// that the run wrote nothing.
func TreeSum(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o %d %d %d.%d\n", p, st.Mode, st.Size, st.Nlink, st.Mtim.Sec, st.Mtim.Nsec)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		case d.Type()&fs.ModeSymlink != 0:
			s, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintln(h, s)
		}
		if d.Type().IsRegular() || d.IsDir() {
			buf := make([]byte, 64*1024)
			n, _ := unix.Llistxattr(p, buf)
			names := strings.Split(string(buf[:max(n, 0)]), "\x00")
			slices.Sort(names)
			for _, x := range names {
				if x == "" {
					continue
				}
				m, _ := unix.Lgetxattr(p, x, buf)
				fmt.Fprintf(h, "%s=%x\n", x, buf[:max(m, 0)])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("checksumming %s: %v", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
