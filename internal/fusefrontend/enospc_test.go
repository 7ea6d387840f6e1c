package fusefrontend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

// inodeTmpfs mounts a tmpfs with room for a fixed number of inodes on a
// temp dir (unmounted at cleanup, after the FUSE mount on top of it), or
// skips when mounting is not permitted.
func inodeTmpfs(t *testing.T, inodes int) string {
	t.Helper()
	dir := t.TempDir()
	testutil.MountTmpfs(t, dir, fmt.Sprintf("size=8m,nr_inodes=%d", inodes))
	return dir
}

// setFreeInodes creates or removes filler files in fillDir until exactly
// free inodes are left on the filesystem.
func setFreeInodes(t *testing.T, fillDir string, free uint64) {
	t.Helper()
	for i := 0; ; i++ {
		var st unix.Statfs_t
		if err := unix.Statfs(fillDir, &st); err != nil {
			t.Fatal(err)
		}
		switch {
		case st.Ffree == free:
			return
		case st.Ffree > free:
			f, err := os.CreateTemp(fillDir, "fill")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			ents, err := os.ReadDir(fillDir)
			if err != nil || len(ents) == 0 {
				t.Fatalf("cannot free an inode: %v", err)
			}
			if err := os.Remove(filepath.Join(fillDir, ents[0].Name())); err != nil {
				t.Fatal(err)
			}
		}
		if i > 10000 {
			t.Fatal("cannot reach the wanted number of free inodes")
		}
	}
}

// cipherTree lists every backing path below dir except the fillers.
func cipherTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "fill" || strings.HasPrefix(rel, "fill/") {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out
}

// TestENOSPCLeavesNoDebris runs out of inodes at every step of operations
// that create several backing entries (long-name file, entry, diriv): the
// operation must fail with ENOSPC and leave CIPHERDIR exactly as before,
// and the source of a failed rename or link must be intact.
func TestENOSPCLeavesNoDebris(t *testing.T) {
	cipher := inodeTmpfs(t, 200)
	tf := mountExisting(t, testConfig{}, cipher, true)
	fillDir := filepath.Join(cipher, "fill")
	if err := os.Mkdir(fillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tf.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := tf.path("src")
	mustWrite(t, src, []byte("source"))
	long := func(s string) string { return tf.path("d/" + strings.Repeat(s, 200)) }
	ops := []struct {
		name string
		// needs is the number of inodes the operation consumes.
		needs uint64
		fn    func() error
	}{
		{"mkdir", 2, func() error { return os.Mkdir(tf.path("d/newdir"), 0o755) }},
		{"mkdir-long", 3, func() error { return os.Mkdir(long("m"), 0o755) }},
		{"create-long", 2, func() error {
			f, err := os.OpenFile(long("c"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"symlink-long", 2, func() error { return os.Symlink("target", long("s")) }},
		{"mknod-long", 2, func() error { return unix.Mkfifo(long("p"), 0o644) }},
		{"link-long", 1, func() error { return os.Link(src, long("l")) }},
		{"rename-long", 1, func() error { return os.Rename(src, long("r")) }},
	}
	// With inodes left but no free data block, writing the content of a
	// long-name file or a diriv fails after the file was created.
	t.Run("blocks-full", func(t *testing.T) {
		filler := filepath.Join(fillDir, "blocks")
		fh, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filler)
		chunk := make([]byte, 4096)
		for {
			if _, err := fh.Write(chunk); err != nil {
				break
			}
		}
		fh.Close()
		for _, op := range ops {
			if op.name == "rename-long" || op.name == "link-long" {
				continue // like create-long, a .name file only
			}
			before := cipherTree(t, cipher)
			err := op.fn()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("%s with a full disk: %v, want ENOSPC", op.name, err)
			}
			if after := cipherTree(t, cipher); !slices.Equal(before, after) {
				t.Errorf("%s: CIPHERDIR changed:\nbefore %q\nafter  %q", op.name, before, after)
			}
		}
	})
	for _, op := range ops {
		for free := uint64(0); free < op.needs; free++ {
			t.Run(fmt.Sprintf("%s-free%d", op.name, free), func(t *testing.T) {
				before := cipherTree(t, cipher)
				setFreeInodes(t, fillDir, free)
				err := op.fn()
				setFreeInodes(t, fillDir, 100)
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("%s with %d free inodes: %v, want ENOSPC", op.name, free, err)
				}
				if after := cipherTree(t, cipher); !slices.Equal(before, after) {
					t.Errorf("CIPHERDIR changed:\nbefore %q\nafter  %q", before, after)
				}
				if b, err := os.ReadFile(src); err != nil || string(b) != "source" {
					t.Errorf("source after the failure: %q, %v", b, err)
				}
			})
		}
	}
}
