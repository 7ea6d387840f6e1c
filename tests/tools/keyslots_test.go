package tools_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/testutil"
)

// cheapArgon2id are the cheapest Argon2id costs the tests may use.
var cheapArgon2id = []string{"-argon2id", "-argon2id-time", "1", "-argon2id-memory", "8"}

// ref runs the reference binary.
func ref(t *testing.T, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{}, testutil.ReferenceBin, args...)
}

// gocryptfsIn runs our binary with stdin.
func gocryptfsIn(t *testing.T, stdin string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{Stdin: stdin}, gocryptfsBin, args...)
}

// opens checks with -fsck (which unlocks like a mount, without FUSE) that
// the secret flags open dir with bin: exit 0, or 12 when want is false.
func opens(t *testing.T, bin, dir string, want bool, secret ...string) {
	t.Helper()
	r := testutil.Run(t, testutil.RunOptions{}, bin, append(append([]string{"-fsck"}, secret...), dir)...)
	if want {
		testutil.Expect(t, r, 0)
	} else {
		testutil.Expect(t, r, 12, "Password incorrect.")
	}
}

// writeFile writes a test file (a key file or password file).
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o400); err != nil {
		t.Fatal(err)
	}
	return p
}

// confJSON reads the config of dir as generic JSON.
func confJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeConfJSON replaces the config of dir.
func writeConfJSON(t *testing.T, dir string, m map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "gocryptfs.conf")
	os.Chmod(p, 0o600)
	if err := os.WriteFile(p, b, 0o400); err != nil {
		t.Fatal(err)
	}
}

// flags returns the FeatureFlags of dir's config joined by spaces.
func flags(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, f := range confJSON(t, dir)["FeatureFlags"].([]any) {
		out = append(out, f.(string))
	}
	return strings.Join(out, " ")
}

// TestKeySlotsReference walks a filesystem through the multi-slot flows and
// checks each state with the reference binary: it opens the filesystem
// with the first slot's password only, -passwd on the second slot keeps
// the first, and removing the first slot makes it refuse with exit 27
// until -passwd moves the new first slot into its fields again.
func TestKeySlotsReference(t *testing.T) {
	testutil.RequireReference(t)
	dir := initFS(t)
	kf := writeFile(t, "key", []byte("key file\x00\xff\n bytes"))
	testutil.Expect(t, gocryptfsIn(t, "test\nsecond\n", "-addkey", "-scryptn", "10", "-label", "partner", dir), 0, "Key slot 1 (password) added.")
	testutil.Expect(t, gocryptfs(t, "-addkey", "-extpass", "echo second", "-newkeyfile", kf, dir), 0, "Key slot 2 (keyfile) added.")
	r := gocryptfs(t, "-info", dir)
	testutil.Expect(t, r, 0, "KeySlots:          3\n", "slot 0:          password scrypt N=1024",
		`slot 1:          password scrypt N=1024 R=8 P=1 label="partner" created=20`, "slot 2:          keyfile scrypt N=65536")
	if strings.Contains(flags(t, dir), "KeySlots") {
		t.Fatalf("flag set although slot 0 is a scrypt password: %s", flags(t, dir))
	}

	// The reference: first slot yes, others no; its -info still works.
	opens(t, testutil.ReferenceBin, dir, true, "-extpass", "echo test")
	opens(t, testutil.ReferenceBin, dir, false, "-extpass", "echo second")
	testutil.Expect(t, ref(t, "-info", dir), 0, "ScryptObject:      Salt=32B N=1024")
	// Ours: every slot, with the matching slot under -d.
	for _, s := range [][]string{{"-extpass", "echo test"}, {"-extpass", "echo second"}, {"-keyfile", kf}} {
		opens(t, gocryptfsBin, dir, true, s...)
	}
	testutil.Expect(t, gocryptfs(t, "-fsck", "-d", "-extpass", "echo second", dir), 0, "Key slot 1 (password) matched")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-d", "-keyfile", kf, dir), 0, "Key slot 2 (keyfile) matched")
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo wrong")
	// gocryptfs-xray -dumpmasterkey opens any password slot.
	conf := filepath.Join(dir, "gocryptfs.conf")
	k0, k1 := xray(t, "test\n", "-dumpmasterkey", conf), xray(t, "second\n", "-dumpmasterkey", conf)
	testutil.Expect(t, k0, 0)
	if k1.Code != 0 || k1.Stdout != k0.Stdout || len(k0.Stdout) != 65 {
		t.Errorf("-dumpmasterkey: slot 0 %v, slot 1 %v", k0, k1)
	}
	testutil.Expect(t, xray(t, "wrong\n", "-dumpmasterkey", conf), 8, "Password incorrect.")

	t.Run("mount", func(t *testing.T) {
		// Written through the reference, read through our second slot.
		mnt := testutil.MountFS(t, testutil.ReferenceBin, dir, "-q", "-extpass", "echo test")
		if err := os.WriteFile(filepath.Join(mnt, "f"), []byte("from ref"), 0o600); err != nil {
			t.Fatal(err)
		}
		testutil.UnmountDir(t, mnt)
		mnt = mountFS2(t, dir, "-extpass", "echo second")
		if b, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(b) != "from ref" {
			t.Fatalf("read %q, %v", b, err)
		}
	})

	// -passwd with the second slot's password changes only that slot.
	testutil.Expect(t, gocryptfsIn(t, "second\nsecond2\n", "-passwd", dir), 0, "Key slot 1 changed", "Password changed.")
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo second")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo second2")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo test")
	opens(t, testutil.ReferenceBin, dir, true, "-extpass", "echo test")
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, `slot 1:          password scrypt N=1024 R=8 P=1 label="partner"`)

	// Removing the first slot: the new first slot is slot-format, so the
	// flag is set and the reference refuses with its own error.
	testutil.Expect(t, gocryptfs(t, "-removekey", "-extpass", "echo test", dir), 0, "Key slot 0 removed.", "-passwd")
	if f := flags(t, dir); !strings.HasSuffix(f, " KeySlots") {
		t.Fatalf("flags after removing slot 0: %s", f)
	}
	testutil.Expect(t, ref(t, "-fsck", "-extpass", "echo second2", dir), 27, `Unknown feature flag "KeySlots"`)
	testutil.Expect(t, ref(t, "-info", dir), 8, `Unknown feature flag "KeySlots"`)
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo test")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo second2")
	opens(t, gocryptfsBin, dir, true, "-keyfile", kf)

	// -passwd on the new first slot moves it back into the reference's
	// fields: the flag goes, the reference opens it again.
	testutil.Expect(t, gocryptfsIn(t, "second2\nthird\n", "-passwd", dir), 0, "Key slot 0 changed")
	if f := flags(t, dir); strings.Contains(f, "KeySlots") {
		t.Fatalf("flag kept after -passwd on slot 0: %s", f)
	}
	opens(t, testutil.ReferenceBin, dir, true, "-extpass", "echo third")
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, `slot 0:          password scrypt N=1024 R=8 P=1 label="partner"`, "(reference-compatible)")

	// The last slot cannot be removed.
	testutil.Expect(t, gocryptfs(t, "-removekey", "-keyfile", kf, dir), 0, "Key slot 1 removed.")
	before := confJSON(t, dir)
	testutil.Expect(t, gocryptfs(t, "-removekey", "-extpass", "echo third", dir), 1, "only key slot")
	if after := confJSON(t, dir); len(after) != len(before) {
		t.Errorf("config changed by the refused removal")
	}
	opens(t, testutil.ReferenceBin, dir, true, "-extpass", "echo third")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", kf, dir), 1, "no keyfile key slot")
}

// mountFS2 mounts dir with our binary and the given secret flags.
func mountFS2(t *testing.T, dir string, secret ...string) string {
	t.Helper()
	return testutil.MountFS(t, gocryptfsBin, dir, append([]string{"-q"}, secret...)...)
}

// TestKeySlotsArgon2id: a filesystem whose only slot uses Argon2id is
// refused by the reference with exit 27; weak Argon2id parameters in a
// hostile config are refused by us (27), weak ones asked for exit 13.
func TestKeySlotsArgon2id(t *testing.T) {
	testutil.RequireReference(t)
	dir := testutil.NewDir(t, "cipher")
	testutil.Expect(t, gocryptfs(t, append(append([]string{"-init", "-q", "-extpass", "echo pw", "-label", "main"}, cheapArgon2id...), dir)...), 0)
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, "FeatureFlags:      HKDF GCMIV128 DirIV EMENames LongNames Raw64 KeySlots\n",
		`slot 0:          password argon2id t=1 m=8192KiB p=4 label="main" created=20`)
	testutil.Expect(t, ref(t, "-fsck", "-extpass", "echo pw", dir), 27, `Unknown feature flag "KeySlots"`)
	mnt := testutil.NewDir(t, "mnt")
	testutil.RequireFuse(t)
	testutil.Expect(t, testutil.Run(t, testutil.RunOptions{}, testutil.ReferenceBin, "-extpass", "echo pw", dir, mnt), 27)
	if testutil.IsMounted(mnt) {
		testutil.UnmountDir(t, mnt)
		t.Fatal("reference mounted an Argon2id-first filesystem")
	}
	mnt = mountFS2(t, dir, "-extpass", "echo pw")
	if err := os.WriteFile(filepath.Join(mnt, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.UnmountDir(t, mnt)
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo nope")

	// -addkey -argon2id and -passwd keep/choose the KDF per slot.
	testutil.Expect(t, gocryptfsIn(t, "pw2\n", append([]string{"-addkey", "-extpass", "echo pw"}, append(cheapArgon2id, dir)...)...), 0, "Key slot 1 (password) added.")
	testutil.Expect(t, gocryptfsIn(t, "pw\npw1\n", "-passwd", "-scryptn", "10", dir), 0)
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, "slot 0:          password scrypt N=1024", "(reference-compatible)", "slot 1:          password argon2id")
	opens(t, testutil.ReferenceBin, dir, true, "-extpass", "echo pw1")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo pw2")

	// Weak or absurd parameters chosen on the command line: exit 13.
	d2 := testutil.NewDir(t, "weak")
	testutil.Expect(t, gocryptfs(t, "-init", "-q", "-extpass", "echo pw", "-argon2id", "-argon2id-memory", "1", d2), 13, "argon2id")
	testutil.Expect(t, gocryptfs(t, "-init", "-q", "-extpass", "echo pw", "-argon2id", "-argon2id-time", "0", d2), 13)
	testutil.Expect(t, gocryptfs(t, "-init", "-q", "-extpass", "echo pw", "-argon2id", "-scryptn", "10", d2), 1)

	// A hostile config weakens the Argon2id slot: refused (27) before any
	// KDF run, while the scrypt slot still opens.
	m := confJSON(t, dir)
	slot := m["KeySlots"].([]any)[0].(map[string]any)
	slot["Argon2id"].(map[string]any)["Memory"] = 64
	writeConfJSON(t, dir, m)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo pw2", dir), 12)
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo pw1")
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, "UNUSABLE: argon2id memory=64 KiB is below the minimum 8192 KiB")
	// With only that slot left for the secret kind: 27.
	m["KeySlots"].([]any)[0].(map[string]any)["Kind"] = "keyfile"
	writeConfJSON(t, dir, m)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", writeFile(t, "k", []byte("pw2")), dir), 27, "below the minimum")
}

// TestKeySlotsTamper edits one slot of a three-slot config in several
// ways; each time only that slot stops opening.
func TestKeySlotsTamper(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, gocryptfsIn(t, "test\ntwo\n", "-addkey", "-scryptn", "10", "-label", "two", dir), 0)
	testutil.Expect(t, gocryptfsIn(t, "test\nthree\n", "-addkey", "-scryptn", "10", dir), 0)
	good := confJSON(t, dir)
	edits := map[string]func(s map[string]any){
		"label":   func(s map[string]any) { s["Label"] = "evil" },
		"created": func(s map[string]any) { s["Created"] = "2001-01-01T00:00:00Z" },
		"kind":    func(s map[string]any) { s["Kind"] = "keyfile" },
		"key": func(s map[string]any) {
			k, err := base64.StdEncoding.DecodeString(s["EncryptedKey"].(string))
			if err != nil {
				t.Fatal(err)
			}
			k[30] ^= 1
			s["EncryptedKey"] = base64.StdEncoding.EncodeToString(k)
		},
		"scrypt N":  func(s map[string]any) { s["Scrypt"].(map[string]any)["N"] = 2048 },
		"json type": func(s map[string]any) { s["Scrypt"] = "not an object" },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			m := confJSON(t, dir)
			slots := m["KeySlots"].([]any)
			edit(slots[0].(map[string]any))
			writeConfJSON(t, dir, m)
			defer writeConfJSON(t, dir, good)
			opens(t, gocryptfsBin, dir, false, "-extpass", "echo two")
			opens(t, gocryptfsBin, dir, true, "-extpass", "echo test")
			opens(t, gocryptfsBin, dir, true, "-extpass", "echo three")
		})
	}
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo two")
}

// TestKeySlotsFstab mounts an Argon2id password slot and a key-file slot
// through mount(8) with fstab options (passfile=, keyfile=).
func TestKeySlotsFstab(t *testing.T) {
	requireMount(t)
	dir := testutil.NewDir(t, "cipher")
	testutil.Expect(t, gocryptfs(t, append(append([]string{"-init", "-q", "-extpass", "echo pw"}, cheapArgon2id...), dir)...), 0)
	kf := writeFile(t, "key", []byte("\x00\x01binary key file"))
	testutil.Expect(t, gocryptfs(t, append([]string{"-addkey", "-extpass", "echo pw", "-newkeyfile", kf}, append(cheapArgon2id, dir)...)...), 0)
	pf := writeFile(t, "pass", []byte("pw\n"))
	fsType := "fuse." + gocryptfsBin
	t.Run("argon2id passfile", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		checkFstabMount(t, dir, mnt, []string{"mount", "-t", fsType, dir, mnt, "-o", "passfile=" + pf + ",nofail"}, "")
	})
	t.Run("keyfile", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		checkFstabMount(t, dir, mnt, []string{"mount", "-t", fsType, dir, mnt, "-o", "keyfile=" + kf + ",nofail,x-systemd.automount"}, "")
	})
	t.Run("keyfile fstab file", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		tab := writeFile(t, "fstab", []byte(dir+" "+mnt+" "+fsType+" nofail,keyfile="+kf+" 0 0\n"))
		checkFstabMount(t, dir, mnt, []string{"mount", "-T", tab, mnt}, "")
	})
	t.Run("wrong keyfile", func(t *testing.T) {
		mnt := testutil.NewDir(t, "mnt")
		out, err := runCmd("mount", "-t", fsType, dir, mnt, "-o", "keyfile="+pf)
		t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
		if err == nil || testutil.IsMounted(mnt) || !strings.Contains(out, "The key file does not unlock any slot.") {
			t.Errorf("mount with a wrong key file: %v %s", err, out)
		}
	})
}

// TestKeySlotsFIDO2 adds two FIDO2 slots (two stand-in tokens) to a
// password filesystem; each token opens its own slot, the password still
// works, and -removekey -fido2 removes the slot of the token given.
func TestKeySlotsFIDO2(t *testing.T) {
	const dev = "/dev/hidraw-standin"
	env, _ := fido2Env(t)
	env2 := append(append([]string{}, env...), "FIDO2_STANDIN_SECRET=token2")
	env3 := append(append([]string{}, env...), "FIDO2_STANDIN_SECRET=token3")
	dir := initFS(t)
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-addkey", "-extpass", "echo test", "-scryptn", "10", "-newfido2", dev, "-label", "key A", dir), 0,
		"FIDO2 Register", "Key slot 1 (fido2) added.")
	// The stand-in has one secret per run, so the second token's slot is
	// added with the password; the first token authenticates below.
	testutil.Expect(t, gocryptfsEnv(t, env2, "", "-addkey", "-extpass", "echo test", "-scryptn", "10", "-newfido2", dev, dir), 0, "Key slot 2 (fido2) added.")
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, `slot 1:          fido2 scrypt N=1024 R=8 P=1 label="key A"`, "slot 2:          fido2 scrypt")
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-fsck", "-d", "-fido2", dev, dir), 0, "Key slot 1 (fido2) matched")
	testutil.Expect(t, gocryptfsEnv(t, env2, "", "-fsck", "-d", "-fido2", dev, dir), 0, "Key slot 2 (fido2) matched")
	testutil.Expect(t, gocryptfsEnv(t, env3, "", "-fsck", "-fido2", dev, dir), 12, "Password incorrect.")
	testutil.Expect(t, gocryptfsEnv(t, append(env, "FIDO2_STANDIN_FAIL=assert"), "", "-fsck", "-fido2", dev, dir), 31)
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo test")
	// FIDO2 slots cannot change their "password".
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-passwd", "-fido2", dev, dir), 1)
	t.Run("mount", func(t *testing.T) {
		testutil.RequireFuse(t)
		mnt := testutil.NewDir(t, "mnt")
		r := gocryptfsEnv(t, env2, "", "-fido2", dev, dir, mnt)
		t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
		testutil.Expect(t, r, 0, "Filesystem mounted and ready.")
	})
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-removekey", "-fido2", dev, dir), 0, `Key slot 1 (label "key A") removed.`)
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-fsck", "-fido2", dev, dir), 12)
	testutil.Expect(t, gocryptfsEnv(t, env2, "", "-fsck", "-fido2", dev, dir), 0)
	// A FIDO2-first filesystem gets a password slot; the password opens
	// it without -fido2.
	d2 := testutil.NewDir(t, "fidofirst")
	testutil.Expect(t, gocryptfsEnv(t, env, "", "-init", "-q", "-scryptn", "10", "-fido2", dev, d2), 0)
	testutil.Expect(t, gocryptfsEnv(t, env, "backup\n", "-addkey", "-fido2", dev, "-scryptn", "10", d2), 0, "Key slot 1 (password) added.")
	opens(t, gocryptfsBin, d2, true, "-extpass", "echo backup")
	testutil.Expect(t, gocryptfsEnv(t, env, "backup\nbackup2\n", "-passwd", d2), 0, "Key slot 1 changed")
	opens(t, gocryptfsBin, d2, true, "-extpass", "echo backup2")
}

// TestKeySlotsErrors covers the refusals of the key-slot options.
func TestKeySlotsErrors(t *testing.T) {
	dir := initFS(t)
	kf := writeFile(t, "key", []byte("k"))
	conf := confJSON(t, dir)
	// Wrong current secret: nothing is added.
	testutil.Expect(t, gocryptfsIn(t, "wrong\nnew\n", "-addkey", dir), 12, "Password incorrect.")
	testutil.Expect(t, gocryptfs(t, "-removekey", "-extpass", "echo wrong", dir), 12)
	if got := confJSON(t, dir); got["KeySlots"] != nil || got["EncryptedKey"] != conf["EncryptedKey"] {
		t.Error("config changed by a failed -addkey/-removekey")
	}
	// No key-file slot yet; then a wrong and an empty key file.
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", kf, dir), 1, "no keyfile key slot")
	testutil.Expect(t, gocryptfs(t, "-addkey", "-extpass", "echo test", "-scryptn", "10", "-newkeyfile", kf, dir), 0)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", writeFile(t, "other", []byte("x")), dir), 12)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", writeFile(t, "empty", nil), dir), 9, "empty")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", filepath.Join(dir, "missing"), dir), 9)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", kf, dir), 0)
	// -passwd on a key-file slot needs the new key file.
	testutil.Expect(t, gocryptfs(t, "-passwd", "-keyfile", kf, dir), 1, "-newkeyfile")
	kf2 := writeFile(t, "key2", []byte("k2"))
	testutil.Expect(t, gocryptfs(t, "-passwd", "-keyfile", kf, "-newkeyfile", kf2, dir), 0)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", kf, dir), 12)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-keyfile", kf2, dir), 0)
	// Usage errors.
	for _, args := range [][]string{
		{"-addkey", "-removekey", dir},
		{"-fsck", "-keyfile", kf, "-extpass", "echo test", dir},
		{"-init", "-newfido2", "/dev/x", dir},
		{"-fsck", "-newkeyfile", kf, dir},
		{"-fsck", "-argon2id", dir},
		{"-addkey", "-newkeyfile", kf, "-newfido2", "/dev/x", dir},
		{"-removekey", "-zerokey", dir},
		{"-init", "-keyfile", kf, testutil.NewDir(t, "new")},
	} {
		testutil.Expect(t, gocryptfs(t, args...), 1)
	}
	// -addkey with -masterkey keeps a .bak, like -passwd does.
	testutil.Expect(t, gocryptfsIn(t, "p\n", "-addkey", "-scryptn", "10", "-zerokey", dir), 0, "gocryptfs.conf.bak")
	if _, err := os.Stat(filepath.Join(dir, "gocryptfs.conf.bak")); err != nil {
		t.Error(err)
	}
}

// TestKeySlotsReverse: slots work on the reverse-mode config too.
func TestKeySlotsReverse(t *testing.T) {
	plain := testutil.NewDir(t, "plain")
	if err := os.WriteFile(filepath.Join(plain, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Expect(t, gocryptfs(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)
	kf := writeFile(t, "key", []byte("reverse key"))
	testutil.Expect(t, gocryptfs(t, "-addkey", "-reverse", "-scryptn", "10", "-extpass", "echo test", "-newkeyfile", kf, plain), 0, "Key slot 1 (keyfile) added.")
	testutil.Expect(t, gocryptfs(t, "-info", "-reverse", plain), 0, "KeySlots:          2", "slot 1:          keyfile scrypt")
	mnt := mountFS2(t, plain, "-reverse", "-keyfile", kf)
	entries, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	encrypted := 0 // besides gocryptfs.conf and gocryptfs.diriv: the encrypted a.txt
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "gocryptfs.") {
			encrypted++
		}
	}
	if encrypted != 1 {
		t.Fatalf("reverse view: %v", entries)
	}
}

// TestKeySlotsReferencePasswd documents what the README warns about: the
// reference's -passwd rewrites the config without the fields it does not
// know, so the extra slots are gone afterwards.
func TestKeySlotsReferencePasswd(t *testing.T) {
	testutil.RequireReference(t)
	dir := initFS(t)
	testutil.Expect(t, gocryptfsIn(t, "test\nsecond\n", "-addkey", "-scryptn", "10", dir), 0)
	r := testutil.Run(t, testutil.RunOptions{Stdin: "test\nnew\n"}, testutil.ReferenceBin, "-passwd", dir)
	testutil.Expect(t, r, 0, "Password changed.")
	if m := confJSON(t, dir); m["KeySlots"] != nil {
		t.Fatalf("the reference kept KeySlots: %v", m)
	}
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo new")
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo second")
}

// TestKeySlotsDuplicateSecret: -addkey and -passwd refuse a new password
// or key file that another slot already takes (before, -addkey accepted
// it, and after -passwd changed one of the two slots the old password
// still opened the filesystem).
func TestKeySlotsDuplicateSecret(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, gocryptfsIn(t, "test\ntwo\n", "-addkey", "-scryptn", "10", dir), 0, "Key slot 1 (password) added.")
	conf := confJSON(t, dir)
	for _, c := range []struct{ stdin, slot string }{{"test\ntest\n", "0"}, {"test\ntwo\n", "1"}, {"two\ntest\n", "0"}} {
		testutil.Expect(t, gocryptfsIn(t, c.stdin, "-addkey", "-scryptn", "10", dir), 1, "Key slot "+c.slot+" already opens with this password")
	}
	kf := writeFile(t, "key", []byte("key file"))
	testutil.Expect(t, gocryptfs(t, "-addkey", "-extpass", "echo test", "-scryptn", "10", "-newkeyfile", kf, dir), 0, "Key slot 2 (keyfile) added.")
	testutil.Expect(t, gocryptfs(t, "-addkey", "-extpass", "echo test", "-scryptn", "10", "-newkeyfile", writeFile(t, "same", []byte("key file")), dir), 1,
		"Key slot 2 already opens with this key file")
	// -passwd: another slot's password is refused, the slot's own is not.
	testutil.Expect(t, gocryptfsIn(t, "two\ntest\n", "-passwd", "-scryptn", "10", dir), 1, "Key slot 0 already opens with this password")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo two")
	testutil.Expect(t, gocryptfsIn(t, "two\ntwo\n", "-passwd", "-scryptn", "10", dir), 0, "Password changed.")
	// The sequence now ends with the old password locked out.
	testutil.Expect(t, gocryptfsIn(t, "test\nnew\n", "-passwd", "-scryptn", "10", dir), 0, "Password changed.")
	opens(t, gocryptfsBin, dir, false, "-extpass", "echo test")
	opens(t, gocryptfsBin, dir, true, "-extpass", "echo new")
	if got := len(confJSON(t, dir)["KeySlots"].([]any)); got != 2 || len(conf["KeySlots"].([]any)) != 1 {
		t.Errorf("%d extra slots, want 2 (one password, one key file)", got)
	}
}

// TestKeySlotsKDFBudget: slot 0's scrypt N raised to 2^28 (256 GiB) by
// whoever holds the storage is skipped with a warning before its KDF runs,
// and the next slot still opens. Before the budget, the process died out
// of memory.
func TestKeySlotsKDFBudget(t *testing.T) {
	dir := initFS(t)
	testutil.Expect(t, gocryptfsIn(t, "test\ntwo\n", "-addkey", "-scryptn", "10", dir), 0)
	m := confJSON(t, dir)
	sc := m["ScryptObject"].(map[string]any)
	if configfile.DefaultKDFMemoryBudget() < 128*8<<28 {
		sc["N"] = 1 << 28
	} else { // a machine with more than 341 GiB: too much work instead
		sc["N"], sc["P"] = 1<<15, 1<<17
	}
	writeConfJSON(t, dir, m)
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo two", dir), 0, "Key slot 0 skipped: key derivation cost above the budget")
	testutil.Expect(t, gocryptfs(t, "-fsck", "-extpass", "echo test", dir), 12, "Key slot 0 skipped", "Password incorrect.")
}
