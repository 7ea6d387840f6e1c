package hostile_test

import (
	"testing"
)

// fsckCases: what -fsck reports for each attack (exit code, lines of
// its output) and what -fsck -repair then does (exit code; with 0 the
// tree must then be clean, otherwise the output must say why). Both run
// with -masterkey, so that no KDF runs.
var fsckCases = []struct {
	attack
	fsckCode   int
	fsckWant   []string
	repairCode int
	repairWant string
}{
	// One problem only: the damaged file in the symlink's target is
	// never seen.
	{symlinkedDir, 26, []string{`fsck: error reading symlink "d": undecryptable symlink target`, "fsck summary: 1 corrupt files"}, 0, ""},
	{symlinkedFile, 26, []string{`fsck: error reading symlink "f.txt": undecryptable symlink target`}, 0, ""},
	{symlinkedDirIV, 26, []string{`fsck: error reading dir "d": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{symlinkedRootDirIV, 26, []string{`fsck: error reading dir "": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{fifoRootDirIV, 26, []string{`fsck: error reading dir "": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{charDevRootDirIV, 26, []string{`fsck: error reading dir "": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{symlinkedLongName, 26, []string{`invalid long name file: ` + longNameFile, `: not a regular file`}, 0, ""},
	{fifoFile, 0, []string{`no problems found`}, 0, ""},
	{fifoDirIV, 26, []string{`fsck: error reading dir "d": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{fifoLongName, 26, []string{`invalid long name file: ` + longNameFile, `: not a regular file`}, 0, ""},
	{charDevFile, 0, []string{`no problems found`}, 0, ""},
	{charDevDirIV, 26, []string{`fsck: error reading dir "d": invalid gocryptfs.diriv: not a regular file`}, 0, ""},
	{charDevLongName, 26, []string{`invalid long name file: ` + longNameFile, `: not a regular file`}, 0, ""},
	{blockDevFile, 0, []string{`no problems found`}, 0, ""},
	// A hard link is a regular file of CIPHERDIR, here with valid content.
	{hardLinkOut, 0, []string{`no problems found`}, 0, ""},
	{hardLinkOutCorrupt, 26, []string{`fsck: error reading file "f.txt" (inum `, "corrupt block #0"}, 0, ""},
	// Only one byte more than an IV is read, never the whole file.
	{hugeDirIV, 26, []string{`fsck: error reading dir "d": invalid gocryptfs.diriv: 17 bytes instead of 16`}, 0, ""},
	{hugeLongName, 26, []string{`invalid long name file: ` + longNameFile, `: 345 bytes`}, 0, ""},
	{truncatedHeader, 26, []string{`fsck: error reading file "f.txt" (inum `}, 0, ""},
	// The directories the repair writes to, planted as symlinks out:
	// -fsck never reads them; the repair refuses to use them (exit 11).
	{symlinkedQuarantine, 26, []string{`fsck: error reading file "f.txt"`}, 11, "gocryptfs.quarantine: not a directory"},
	{symlinkedLostFound, 26, []string{`fsck: error reading file "f.txt"`, `fsck: error reading symlink "lost+found"`}, 11, ": not a directory"},
	{truncatedBlock, 26, []string{`fsck: error reading file "f.txt" (inum `}, 0, ""},
}

var masterkeyArgs = []string{"-masterkey=" + masterKeyHex}

// TestFsck runs -fsck on each attack: it finishes (deadline), reports
// the attacked entry with exit 26 (or 0 where the planted entry is a
// legitimate one, like a FIFO), writes nothing to CIPHERDIR and nothing
// outside, and prints no plaintext of the sentinel.
func TestFsck(t *testing.T) {
	for _, c := range fsckCases {
		harness(t, c.attack, func(t *testing.T, f *fixture) {
			sum := treeState(t, f.cipher)
			r := gocryptfs(t, append(append([]string{"-fsck"}, masterkeyArgs...), f.cipher)...)
			expect(t, "-fsck", r, c.fsckCode, c.fsckWant...)
			noSecretIn(t, "-fsck", r.Stdout+r.Stderr)
			if treeState(t, f.cipher) != sum {
				t.Error("-fsck changed CIPHERDIR")
			}
		})
	}
}

// TestRepair runs -fsck -repair on each attack: it finishes, follows no
// planted symlink out (the sentinel is unchanged), writes no plaintext
// into CIPHERDIR, and leaves a tree that -fsck then finds clean.
func TestRepair(t *testing.T) {
	for _, c := range fsckCases {
		harness(t, c.attack, func(t *testing.T, f *fixture) {
			r := gocryptfs(t, append(append([]string{"-fsck", "-repair", "-q"}, masterkeyArgs...), f.cipher)...)
			expect(t, "-fsck -repair", r, c.repairCode, c.repairWant)
			noSecretIn(t, "-fsck -repair", r.Stdout+r.Stderr)
			if c.repairCode == 0 {
				r = gocryptfs(t, append(append([]string{"-fsck"}, masterkeyArgs...), f.cipher)...)
				expect(t, "-fsck after -repair", r, 0, "no problems found")
			}
		})
	}
}
