package hostile_test

import (
	"encoding/json"
	"os"
	"testing"

	"gocryptfs/internal/testutil"
)

// confCommand is one program that reads the config: how to run it on a
// fixture, and its exit code for each config attack.
type confCommand struct {
	name   string
	run    func(t *testing.T, f *fixture) testutil.Result
	writes bool // rewrites the config
}

// The commands that read (and some write) gocryptfs.conf.
var (
	cmdMount = confCommand{"mount", func(t *testing.T, f *fixture) testutil.Result {
		_, _, r := mountWithin(t, f.cipher, pw...)
		return r
	}, false}
	cmdFsck = confCommand{"fsck", func(t *testing.T, f *fixture) testutil.Result {
		return gocryptfs(t, append(append([]string{"-fsck"}, pw...), f.cipher)...)
	}, false}
	cmdInfo = confCommand{"info", func(t *testing.T, f *fixture) testutil.Result {
		return gocryptfs(t, "-info", f.cipher)
	}, false}
	cmdPasswd = confCommand{"passwd", func(t *testing.T, f *fixture) testutil.Result {
		return run(t, testutil.Password+"\nnew\n", gocryptfsBin, "-passwd", f.cipher)
	}, true}
	cmdAddkey = confCommand{"addkey", func(t *testing.T, f *fixture) testutil.Result {
		return run(t, testutil.Password+"\nsecond\n", gocryptfsBin, "-addkey", "-scryptn", "10", f.cipher)
	}, true}
	cmdDumpKey = confCommand{"xray-dumpmasterkey", func(t *testing.T, f *fixture) testutil.Result {
		return xray(t, testutil.Password+"\n", "-dumpmasterkey", f.conf())
	}, false}
)

// confCases: each config attack against each command, with the exit
// code it must give (and a line of its output). Every run must finish
// within the deadline, leave the sentinel (which holds the symlink's
// target config) unchanged, and print no plaintext.
var confCases = []struct {
	attack
	cmd  confCommand
	code int
	want string
}{
	// A symlinked config is read like the reference reads it (a config
	// may live elsewhere; what it points to is no more trusted than a
	// planted file); a write replaces the link by a regular file and
	// leaves the target alone.
	{symlinkedConf, cmdMount, 0, ""},
	{symlinkedConf, cmdFsck, 0, "no problems found"},
	{symlinkedConf, cmdInfo, 0, "FeatureFlags:"},
	{symlinkedConf, cmdPasswd, 0, "Password changed."},
	{symlinkedConf, cmdAddkey, 0, "Key slot 1 (password) added."},
	{symlinkedConf, cmdDumpKey, 0, masterKeyHex},
	// A planted temporary file (here a symlink out) makes a write refuse
	// (exit 24) instead of writing through it.
	{symlinkedConfTmp, cmdPasswd, 24, "gocryptfs.conf.tmp: file exists"},
	{symlinkedConfTmp, cmdAddkey, 24, "gocryptfs.conf.tmp: file exists"},
	// A FIFO or /dev/zero: refused at once, nothing read.
	{fifoConf, cmdMount, 11, "not a regular file"},
	{fifoConf, cmdFsck, 11, "not a regular file"},
	{fifoConf, cmdInfo, 8, "not a regular file"},
	{fifoConf, cmdPasswd, 11, "not a regular file"},
	{fifoConf, cmdAddkey, 11, "not a regular file"},
	{fifoConf, cmdDumpKey, 11, "not a regular file"},
	{charDevConf, cmdMount, 11, "not a regular file"},
	{charDevConf, cmdFsck, 11, "not a regular file"},
	{charDevConf, cmdInfo, 8, "not a regular file"},
	{charDevConf, cmdPasswd, 11, "not a regular file"},
	{charDevConf, cmdDumpKey, 11, "not a regular file"},
	// Read up to 1 MiB + 1 byte, then refused.
	{hugeConf, cmdMount, 11, "larger than 1048576 bytes"},
	{hugeConf, cmdFsck, 11, "larger than 1048576 bytes"},
	{hugeConf, cmdInfo, 8, "larger than 1048576 bytes"},
	{hugeConf, cmdPasswd, 11, "larger than 1048576 bytes"},
	{hugeConf, cmdDumpKey, 11, "larger than 1048576 bytes"},
	{truncatedConf, cmdMount, 11, "malformed config file"},
	{truncatedConf, cmdFsck, 11, "malformed config file"},
	{truncatedConf, cmdInfo, 8, "malformed config file"},
	{truncatedConf, cmdPasswd, 11, "malformed config file"},
	{truncatedConf, cmdDumpKey, 11, "malformed config file"},
	// Swapped wrapped keys: both slots refuse their password like a
	// wrong one; slot 0 still opens.
	{swappedSlotKeys, cmdFsck, 0, "no problems found"},
	{swappedSlotKeys, unlockWith("two"), 12, "Password incorrect."},
	{swappedSlotKeys, unlockWith("three"), 12, "Password incorrect."},
	{swappedSlotKeys, cmdInfo, 0, "KeySlots:          3"},
	// A duplicated slot opens like its original and is listed twice.
	{duplicatedSlot, unlockWith("two"), 0, "no problems found"},
	{duplicatedSlot, cmdInfo, 0, "KeySlots:          4"},
	{duplicatedSlot, cmdPasswd, 0, "Key slot 0 changed"},
	// Slots are self-contained: their order does not matter.
	{reorderedSlots, unlockWith("two"), 0, "no problems found"},
	{reorderedSlots, unlockWith("three"), 0, "no problems found"},
}

// unlockWith unlocks with -fsck (which opens the config like a mount,
// without FUSE) and the password.
func unlockWith(password string) confCommand {
	return confCommand{"unlock-" + password, func(t *testing.T, f *fixture) testutil.Result {
		return gocryptfs(t, "-fsck", "-extpass", "echo "+password, f.cipher)
	}, false}
}

// TestConfig runs every command of confCases on its attacked config.
func TestConfig(t *testing.T) {
	for _, c := range confCases {
		a := c.attack
		a.name += "/" + c.cmd.name
		harness(t, a, func(t *testing.T, f *fixture) {
			r := c.cmd.run(t, f)
			expect(t, c.cmd.name, r, c.code, c.want)
			noSecretIn(t, c.cmd.name, r.Stdout+r.Stderr)
			// A successful write leaves a regular file in CIPHERDIR
			// (written beside it and renamed over it), never a write
			// through a planted link.
			if c.cmd.writes && r.Code == 0 {
				if fi, err := os.Lstat(f.conf()); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("config after %s: %v, %v", c.cmd.name, fi, err)
				}
			}
		})
	}
}

// addSlots gives the fixture's config two more password slots, "two" and
// "three", and returns the config as generic JSON.
func addSlots(t *testing.T, f *fixture) map[string]any {
	t.Helper()
	expect(t, "-addkey", run(t, testutil.Password+"\ntwo\n", gocryptfsBin, "-addkey", "-scryptn", "10", f.cipher), 0)
	expect(t, "-addkey", run(t, testutil.Password+"\nthree\n", gocryptfsBin, "-addkey", "-scryptn", "10", f.cipher), 0)
	b, err := os.ReadFile(f.conf())
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(b, &m))
	return m
}

// writeConf replaces the config with m.
func writeConf(t *testing.T, f *fixture, m map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "\t")
	must(t, err)
	must(t, os.Chmod(f.conf(), 0o600))
	must(t, os.WriteFile(f.conf(), b, 0o400))
}

// Attacks on the key slots of a three-slot config (slot 0 in the
// reference's fields, slots 1 and 2 in KeySlots).
var (
	// The wrapped keys of slots 1 and 2 exchanged: each is bound to its
	// own slot's parameters, so neither opens any more.
	swappedSlotKeys = attack{"swapped-slot-keys", func(t *testing.T, f *fixture) {
		m := addSlots(t, f)
		s := m["KeySlots"].([]any)
		a, b := s[0].(map[string]any), s[1].(map[string]any)
		a["EncryptedKey"], b["EncryptedKey"] = b["EncryptedKey"], a["EncryptedKey"]
		writeConf(t, f, m)
	}}
	// Slot 1 twice.
	duplicatedSlot = attack{"duplicated-slot", func(t *testing.T, f *fixture) {
		m := addSlots(t, f)
		s := m["KeySlots"].([]any)
		m["KeySlots"] = append(s, s[0])
		writeConf(t, f, m)
	}}
	// Slots 1 and 2 in the other order.
	reorderedSlots = attack{"reordered-slots", func(t *testing.T, f *fixture) {
		m := addSlots(t, f)
		s := m["KeySlots"].([]any)
		s[0], s[1] = s[1], s[0]
		writeConf(t, f, m)
	}}
)
