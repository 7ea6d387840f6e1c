package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// fido2Env puts the stand-in fido2-cred/fido2-assert scripts first on PATH
// and returns the environment and the log file they append to.
func fido2Env(t *testing.T, extra ...string) ([]string, string) {
	t.Helper()
	td, err := filepath.Abs("../../internal/fido2/testdata")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "fido2.log")
	env := []string{"PATH=" + td + ":" + os.Getenv("PATH"), "FIDO2_STANDIN_LOG=" + log}
	return append(env, extra...), log
}

func gocryptfsEnv(t *testing.T, env []string, stdin string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.RunOptions{Env: env, Stdin: stdin}, gocryptfsBin, args...)
}

func TestFIDO2(t *testing.T) {
	const dev = "/dev/hidraw-standin"
	env, logFile := fido2Env(t)
	dir := filepath.Join(t.TempDir(), "myvault")
	os.Mkdir(dir, 0o700)

	// -init registers a credential and wraps the key with the hmac-secret.
	r := gocryptfsEnv(t, env, "", "-init", "-scryptn", "10", "-fido2", dev,
		"-fido2-assert-option", "up=true", "-fido2-assert-option", "pin=false", dir)
	testutil.Expect(t, r, 0, "FIDO2 Register: interact with your device", "has been created successfully")
	if strings.Contains(r.Stdout, "Choose a password") {
		t.Errorf("-init -fido2 asked for a password: %v", r)
	}
	var conf struct {
		FeatureFlags []string
		FIDO2        *struct {
			CredentialID, HMACSalt []byte
			AssertOptions          []string
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}
	if conf.FIDO2 == nil || len(conf.FIDO2.CredentialID) == 0 || len(conf.FIDO2.HMACSalt) != 32 ||
		strings.Join(conf.FIDO2.AssertOptions, ",") != "up=true,pin=false" ||
		conf.FeatureFlags[len(conf.FeatureFlags)-1] != "FIDO2" {
		t.Fatalf("config: %s", data)
	}
	testutil.Expect(t, gocryptfs(t, "-info", dir), 0, "FIDO2")
	log, _ := os.ReadFile(logFile)
	for _, w := range []string{
		"fido2-cred -M -h " + dev + "\n",
		"cred-input rp=gocryptfs user=myvault\n",
		"fido2-assert -G -h -t up=true -t pin=false " + dev + "\n",
		"assert-input rp=gocryptfs\n",
	} {
		if !strings.Contains(string(log), w) {
			t.Errorf("fido2 tools log lacks %q:\n%s", w, log)
		}
	}

	t.Run("mount", func(t *testing.T) {
		testutil.RequireFuse(t)
		mnt := testutil.NewDir(t, "mnt")
		r := gocryptfsEnv(t, env, "", "-fido2", dev, dir, mnt)
		t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
		testutil.Expect(t, r, 0, "FIDO2 Secret: interact with your device", "Filesystem mounted and ready.")
		if err := os.WriteFile(filepath.Join(mnt, "secret.txt"), []byte("top"), 0o600); err != nil {
			t.Fatal(err)
		}
		testutil.UnmountDir(t, mnt)
		r = gocryptfsEnv(t, env, "", "-fido2", dev, dir, mnt)
		testutil.Expect(t, r, 0)
		if b, err := os.ReadFile(filepath.Join(mnt, "secret.txt")); err != nil || string(b) != "top" {
			t.Errorf("read back %q, %v", b, err)
		}
	})
	t.Run("fsck", func(t *testing.T) {
		testutil.Expect(t, gocryptfsEnv(t, env, "", "-fsck", "-fido2", dev, dir), 0, "fsck summary: no problems found")
	})
	t.Run("xray", func(t *testing.T) {
		r := testutil.Run(t, testutil.RunOptions{Env: env}, xrayBin, "-dumpmasterkey", "-fido2", dev, filepath.Join(dir, "gocryptfs.conf"))
		testutil.Expect(t, r, 0)
		if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).MatchString(r.Stdout) {
			t.Fatalf("dumpmasterkey: %v", r)
		}
		// The key dumped is the real one: -fsck with it finds the files.
		testutil.Expect(t, gocryptfs(t, "-fsck", "-masterkey="+strings.TrimSpace(r.Stdout), dir), 0, "no problems found")
		testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Env: env, Stdin: "test\n"}, xrayBin, "-dumpmasterkey", filepath.Join(dir, "gocryptfs.conf")), 1, "-fido2")
		testutil.Expect(t, testutil.Run(t, testutil.RunOptions{Env: append(env, "FIDO2_STANDIN_FAIL=assert")}, xrayBin,
			"-dumpmasterkey", "-fido2", dev, filepath.Join(dir, "gocryptfs.conf")), 31)
	})
	t.Run("errors", func(t *testing.T) {
		m := testutil.NewDir(t, "mnt")
		// FIDO2 config without -fido2: exit 1, no password prompt.
		testutil.Expect(t, gocryptfsEnv(t, env, "test\n", "-fg", dir, m), 1, "-fido2")
		testutil.Expect(t, gocryptfsEnv(t, env, "", "-fsck", dir), 1, "-fido2")
		// -fido2 together with -extpass: exit 1.
		testutil.Expect(t, gocryptfsEnv(t, env, "", "-fg", "-fido2", dev, "-extpass", "echo test", dir, m), 1)
		// Password change is not possible for FIDO2 filesystems.
		testutil.Expect(t, gocryptfsEnv(t, env, "test\nnew\n", "-passwd", "-fido2", dev, dir), 1)
		testutil.Expect(t, gocryptfsEnv(t, env, "test\nnew\n", "-passwd", dir), 1)
		// The token fails: exit 31.
		failEnv := append(append([]string{}, env...), "FIDO2_STANDIN_FAIL=assert")
		testutil.Expect(t, gocryptfsEnv(t, failEnv, "", "-fg", "-fido2", dev, dir, m), 31, "fido2-assert failed")
		testutil.Expect(t, gocryptfsEnv(t, append(append([]string{}, env...), "FIDO2_STANDIN_FAIL=short"), "", "-fg", "-fido2", dev, dir, m), 31)
		// Another token gives another secret: the key does not unwrap.
		otherEnv := append(append([]string{}, env...), "FIDO2_STANDIN_SECRET=token2")
		testutil.Expect(t, gocryptfsEnv(t, otherEnv, "", "-fg", "-fido2", dev, dir, m), 12, "Password incorrect.")
		if testutil.IsMounted(m) {
			testutil.UnmountDir(t, m)
			t.Error("mounted despite errors")
		}
	})
	t.Run("init failures", func(t *testing.T) {
		for _, fail := range []string{"cred", "assert", "zero"} {
			d := testutil.NewDir(t, "vault")
			e := append(append([]string{}, env...), "FIDO2_STANDIN_FAIL="+fail)
			testutil.Expect(t, gocryptfsEnv(t, e, "", "-init", "-scryptn", "10", "-fido2", dev, d), 31)
			if _, err := os.Stat(filepath.Join(d, "gocryptfs.conf")); !os.IsNotExist(err) {
				t.Errorf("%s: config written despite the failure: %v", fail, err)
			}
		}
		d := testutil.NewDir(t, "vault")
		testutil.Expect(t, gocryptfsEnv(t, env, "", "-init", "-scryptn", "10", "-fido2", dev, "-extpass", "echo test", d), 1)
	})
}
