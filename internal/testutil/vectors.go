package testutil

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Vector is one row of the tables in testdata/vectors/README.md: a
// filesystem written by the reference implementation, password "test".
type Vector struct {
	// Name is the directory below reference-examples.
	Name string
	// MasterKey is printed as in the README: eight dash-separated groups.
	MasterKey string
	// The settings a -masterkey mount must be given (the config is not
	// read then).
	Cipher             Cipher
	HKDF, Raw64        bool
	PlaintextNames     bool
	DeterministicNames bool
	// HasLongName tells whether the plaintext includes VectorLongName.
	HasLongName bool
	// Reverse vectors are plaintext directories holding
	// .gocryptfs.reverse.conf; their encrypted view is what -reverse shows.
	Reverse bool
}

// Key returns the decoded master key.
func (v Vector) Key(t testing.TB) []byte {
	t.Helper()
	return MustHex(t, v.MasterKey)
}

// Flags returns the README's "extra flags for a -masterkey mount", in its
// order. For a reverse vector -aessiv is left out, as -reverse implies it;
// a forward mount of its encrypted view must add it.
func (v Vector) Flags() []string {
	var f []string
	switch {
	case v.Cipher == AESSIV && !v.Reverse:
		f = append(f, "-aessiv")
	case v.Cipher == XChaCha20Poly1305:
		f = append(f, "-xchacha")
	}
	if v.PlaintextNames {
		f = append(f, "-plaintextnames")
	}
	if v.DeterministicNames {
		f = append(f, "-deterministic-names")
	}
	if !v.Raw64 {
		f = append(f, "-raw64=false")
	}
	if !v.HKDF {
		f = append(f, "-hkdf=false")
	}
	return f
}

// ConfigName is the name of the vector's config file in its directory.
func (v Vector) ConfigName() string {
	if v.Reverse {
		return ".gocryptfs.reverse.conf"
	}
	return "gocryptfs.conf"
}

// ForwardVectors returns the forward-mode vectors the project must mount,
// oldest first.
func ForwardVectors() []Vector {
	return []Vector{
		{Name: "v0.7", MasterKey: "ed7f6d83-40cce86c-0e7d79c2-a9438710-575221bf-30a0eb60-2821fa8f-7f3123bf"},
		{Name: "v0.7-plaintextnames", MasterKey: "6d96397b-585631e1-c7cba69d-61e738b6-4d5ad2c2-e21f0fb3-52f60d3a-b08526f7", PlaintextNames: true},
		{Name: "v0.9", MasterKey: "1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c", HasLongName: true},
		{Name: "v1.1-aessiv", MasterKey: "eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b", Cipher: AESSIV, HasLongName: true},
		{Name: "v1.3", MasterKey: "fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e", HKDF: true, Raw64: true, HasLongName: true},
		{Name: "v2.2-deterministic-names", MasterKey: "722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e", HKDF: true, Raw64: true, DeterministicNames: true, HasLongName: true},
		{Name: "v2.2-xchacha", MasterKey: "44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26", Cipher: XChaCha20Poly1305, HKDF: true, Raw64: true, HasLongName: true},
		{Name: "v2.2-xchacha-deterministic-names", MasterKey: "beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39", Cipher: XChaCha20Poly1305, HKDF: true, Raw64: true, DeterministicNames: true, HasLongName: true},
	}
}

// ReverseVectors returns the reverse-mode vectors (plaintext directories).
func ReverseVectors() []Vector {
	return []Vector{
		{Name: "v1.1-reverse", MasterKey: "68b51855-042abd80-635ae1ba-90152a78-2ec2d243-832ac72a-eab0561a-f2d37913", Cipher: AESSIV, HasLongName: true, Reverse: true},
		{Name: "v1.1-reverse-plaintextnames", MasterKey: "e7fb8f0d-2a81df9e-26611e4b-5540b218-e48aa458-c2a623af-d0c82637-1466b5f2", Cipher: AESSIV, PlaintextNames: true, HasLongName: true, Reverse: true},
		{Name: "v1.3-reverse", MasterKey: "2290a7f4-3e1908fb-b006f7d9-261bdaf1-4b72bc38-3b24956c-db7d8a8d-d996076a", Cipher: AESSIV, HKDF: true, Raw64: true, HasLongName: true, Reverse: true},
	}
}

// AllVectors returns the forward vectors followed by the reverse ones.
func AllVectors() []Vector {
	return append(ForwardVectors(), ReverseVectors()...)
}

// VectorNamed returns the vector called name; an unknown name fails the
// test.
func VectorNamed(t testing.TB, name string) Vector {
	t.Helper()
	for _, v := range AllVectors() {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no reference vector %q", name)
	return Vector{}
}

// TooOldVectors returns the names of the v0.4–v0.6 vectors, which must be
// refused as too old.
func TooOldVectors() []string {
	return []string{"v0.4", "v0.5", "v0.6", "v0.6-plaintextnames"}
}

// Facts of the plaintext the vectors hold (the README's "content" table).
const (
	// VectorContent is the content of status.txt and of the long name file.
	VectorContent = "It works!\n"
	// VectorRelTarget and VectorAbsTarget are the targets of the symlinks
	// rel and abs.
	VectorRelTarget = "status.txt"
	VectorAbsTarget = "/a/b/c/d"
)

// VectorLongName is the 255-byte name present from v0.9 on.
var VectorLongName = "longname_255_" + strings.Repeat("x", 242)

// VectorSymlinks returns a new map from each symlink of the vectors'
// plaintext to its target.
func VectorSymlinks() map[string]string {
	return map[string]string{"rel": VectorRelTarget, "abs": VectorAbsTarget}
}

// ProjectRoot returns the directory holding go.mod, searched upwards from
// the working directory (a test runs in its package directory).
func ProjectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("project root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("project root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// VectorsRel is where the reference vectors live, relative to the
// project root (testdata/vectors/README.md describes them).
const VectorsRel = "testdata/vectors/reference-examples"

// EmptyDirMarker is the file that stands in for a directory the reference
// left empty: git stores no empty directories, so such a directory holds
// this file in the repository, and the copy helpers leave it out.
const EmptyDirMarker = ".gitkeep"

// VectorsDir returns the reference vectors' directory in the repository.
// They are part of the project: a test that needs them fails, rather than
// skips, when they are missing.
func VectorsDir(t testing.TB) string {
	t.Helper()
	root, err := ProjectRoot()
	if err != nil {
		t.Fatalf("reference vectors: %v", err)
	}
	d, err := vectorsIn(root)
	if err != nil {
		t.Fatalf("reference vectors missing from the repository: %v", err)
	}
	return d
}

// vectorsIn returns the vectors' directory below the project root root.
func vectorsIn(root string) (string, error) {
	d := filepath.Join(root, filepath.FromSlash(VectorsRel))
	st, err := os.Stat(d)
	if err != nil {
		return "", fmt.Errorf("reference vectors: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("reference vectors: %s is not a directory", d)
	}
	return d, nil
}

// VectorDir returns the directory of the vector called name (read-only:
// copy it before writing or mounting). A missing vector fails the test.
func VectorDir(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join(VectorsDir(t), name)
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("reference vector %s missing: %v", name, err)
	}
	return d
}

// ReadStored returns what the reference stored in the vector entry at p and
// whether the entry is a symlink: a symlink's target, or a regular file's
// content. A symlink may also be stored flattened (a regular file holding
// the target); only the caller can tell such a file from content, so it
// comes back as a regular file.
func ReadStored(p string) (data []byte, symlink bool, err error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, false, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		return []byte(target), true, err
	}
	data, err = os.ReadFile(p)
	return data, false, err
}

// The vectors hold symlinks in either of two forms: real symlinks (as in
// the repository), or flattened into a regular file whose content is the
// stored target (encrypted in ciphertext vectors), as a copy through a
// medium without symlinks leaves them. The copy helpers give real symlinks
// for both.

// CopyCipherVector copies the ciphertext vector called name to a writable
// temp dir (…/name) and returns its path. A regular file is a flattened
// symlink unless it is a config, diriv or .name file (known by name), empty,
// or a content file (which starts with the header version 00 02); a target
// is printable text, which also keeps the binary files of the too-old
// vectors regular. gocryptfs.conf gets mode 0400, as -init writes it.
func CopyCipherVector(t testing.TB, name string) string {
	t.Helper()
	return copyVector(t, name, flattenedCipher)
}

// CopyPlainVector copies the plaintext (reverse-mode) vector called name to
// a writable temp dir (…/name) and returns its path. Its symlinks are rel
// and abs in the root.
func CopyPlainVector(t testing.TB, name string) string {
	t.Helper()
	return copyVector(t, name, flattenedPlain)
}

// flattenedCipher tells a flattened symlink of a ciphertext vector (see
// CopyCipherVector).
func flattenedCipher(rel string, data []byte) bool {
	base := filepath.Base(rel)
	meta := base == "gocryptfs.conf" || base == "gocryptfs.diriv" ||
		base == ".gocryptfs.reverse.conf" || strings.HasSuffix(base, ".name")
	return !meta && isTarget(data)
}

// flattenedPlain tells a flattened symlink of a plaintext vector: only the
// root's rel and abs are symlinks.
func flattenedPlain(rel string, _ []byte) bool {
	_, ok := VectorSymlinks()[rel]
	return ok
}

// isTarget tells a flattened symlink's content from file content.
func isTarget(b []byte) bool {
	if len(b) == 0 || bytes.HasPrefix(b, []byte{0, 2}) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func copyVector(t testing.TB, name string, flattened func(rel string, data []byte) bool) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := copyTree(VectorDir(t, name), dst, flattened); err != nil {
		t.Fatalf("copying vector %s: %v", name, err)
	}
	return dst
}

// copyTree copies the vector tree src to dst as the reference wrote it:
// real symlinks stay symlinks, regular files for which flattened is true
// become symlinks to their content, and EmptyDirMarker files are left out
// (their directory is created all the same).
func copyTree(src, dst string, flattened func(rel string, data []byte) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case d.Name() == EmptyDirMarker:
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: unexpected file type %v", rel, d.Type())
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if flattened(rel, data) {
			return os.Symlink(string(data), out)
		}
		mode := os.FileMode(0o644)
		if rel == "gocryptfs.conf" {
			mode = 0o400
		}
		return os.WriteFile(out, data, mode)
	})
}
