package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

func TestInitFresh(t *testing.T) {
	dir := newDir(t)
	r := run(t, "-init", "-scryptn", "10", "-extpass", "echo test", dir)
	testutil.Expect(t, r, 0)
	wantOut := []string{
		`Reading password from extpass program "echo", arguments: ["test"]`,
		"Not running on a terminal, suppressing master key display",
		"The gocryptfs filesystem has been created successfully.",
		"You can now mount it using: gocryptfs " + dir + " MOUNTPOINT",
	}
	got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(wantOut, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, strings.Join(wantOut, "\n"))
	}
	if strings.Contains(r.Stdout, "Choose a password") {
		t.Error("'Choose a password' must not be printed with -extpass")
	}
	fi, err := os.Stat(filepath.Join(dir, "gocryptfs.conf"))
	if err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("gocryptfs.conf: %v %v", fi, err)
	}
	fi, err = os.Stat(filepath.Join(dir, "gocryptfs.diriv"))
	if err != nil || fi.Size() != 16 {
		t.Errorf("gocryptfs.diriv: %v %v", fi, err)
	}
	// The directory is no longer empty: a second -init fails with 6.
	testutil.Expect(t, run(t, "-init", "-scryptn", "10", "-extpass", "echo test", dir), 6)
}

func TestInitInfoLines(t *testing.T) {
	dir := initFS(t)
	r := run(t, "-info", dir)
	testutil.Expect(t, r, 0)
	want := regexp.MustCompile(`^Creator:           gocryptfs ` + regexp.QuoteMeta(testVersion) + `\n` +
		`FeatureFlags:      HKDF GCMIV128 DirIV EMENames LongNames Raw64\n` +
		`EncryptedKey:      64B\n` +
		`ScryptObject:      Salt=32B N=1024 R=8 P=1 KeyLen=32\n` +
		`contentEncryption: AES-GCM-256\n$`)
	if !want.MatchString(r.Stdout) {
		t.Errorf("-info output:\n%s", r.Stdout)
	}
}

func TestInitVariants(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		flags   string
		cipher  string
		diriv   bool
		extraRe string
	}{
		{"xchacha", []string{"-xchacha"}, "HKDF XChaCha20Poly1305 DirIV EMENames LongNames Raw64", "XChaCha20-Poly1305", true, ""},
		{"aessiv", []string{"-aessiv"}, "HKDF GCMIV128 DirIV EMENames LongNames Raw64 AESSIV", "AES-SIV-512", true, ""},
		{"plaintextnames", []string{"-plaintextnames"}, "HKDF GCMIV128 PlaintextNames", "AES-GCM-256", false, ""},
		{"deterministic", []string{"-deterministic-names"}, "HKDF GCMIV128 EMENames LongNames Raw64", "AES-GCM-256", false, ""},
		{"longnamemax", []string{"-longnamemax", "100"}, "HKDF GCMIV128 DirIV LongNameMax EMENames LongNames Raw64", "AES-GCM-256", true, `"LongNameMax": 100`},
		{"ignored legacy flags", []string{"-hkdf=false", "-raw64=false", "-devrandom"}, "HKDF GCMIV128 DirIV EMENames LongNames Raw64", "AES-GCM-256", true, ""},
		{"via -o", []string{"-o", "xchacha,longnamemax=62"}, "HKDF XChaCha20Poly1305 DirIV LongNameMax EMENames LongNames Raw64", "XChaCha20-Poly1305", true, `"LongNameMax": 62`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := initFS(t, c.args...)
			r := run(t, "-info", dir)
			testutil.Expect(t, r, 0, "FeatureFlags:      "+c.flags+"\n", "contentEncryption: "+c.cipher+"\n")
			_, err := os.Stat(filepath.Join(dir, "gocryptfs.diriv"))
			if (err == nil) != c.diriv {
				t.Errorf("gocryptfs.diriv present=%v, want %v", err == nil, c.diriv)
			}
			if c.extraRe != "" {
				conf, _ := os.ReadFile(filepath.Join(dir, "gocryptfs.conf"))
				if !strings.Contains(string(conf), c.extraRe) {
					t.Errorf("config lacks %q:\n%s", c.extraRe, conf)
				}
			}
		})
	}
}

func TestInitErrors(t *testing.T) {
	nonEmpty := newDir(t)
	os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o600)
	cases := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string
	}{
		{"non-empty dir", []string{"-extpass", "echo test", nonEmpty}, "", 6, nil},
		{"missing dir", []string{"-extpass", "echo test", filepath.Join(nonEmpty, "nope")}, "", 6, nil},
		{"scryptn 9", []string{"-scryptn", "9", "-extpass", "echo test", "NEWDIR"}, "", 24, nil},
		{"xchacha+aessiv", []string{"-scryptn", "10", "-xchacha", "-aessiv", "-extpass", "echo test", "NEWDIR"}, "", 24, nil},
		{"empty stdin password", []string{"-scryptn", "10", "NEWDIR"}, "\n", 9, []string{"got empty Password from stdin"}},
		{"empty extpass", []string{"-scryptn", "10", "-extpass", "true", "NEWDIR"}, "", 9, []string{"extpass: password is empty"}},
		{"failing extpass", []string{"-scryptn", "10", "-extpass", "false", "NEWDIR"}, "", 9, nil},
		{"unreadable passfile", []string{"-scryptn", "10", "-passfile", "/nonexistent", "NEWDIR"}, "", 9, nil},
		{"endless passfile", []string{"-scryptn", "10", "-passfile", "/dev/zero", "NEWDIR"}, "", 9, []string{"password is too long"}},
		{"bad masterkey", []string{"-scryptn", "10", "-masterkey", "abc", "-extpass", "echo test", "NEWDIR"}, "", 14, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-init"}, c.args...)
			for i, a := range args {
				if a == "NEWDIR" {
					args[i] = newDir(t)
				}
			}
			testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: c.stdin}, args...), c.code, c.want...)
		})
	}
}

func TestInitStdinAndRelativePath(t *testing.T) {
	parent := t.TempDir()
	os.Mkdir(filepath.Join(parent, "my cipher"), 0o700)
	r := runWith(t, testutil.RunOptions{Stdin: "pw from stdin\n", Dir: parent}, "-init", "-scryptn", "10", "my cipher")
	testutil.Expect(t, r, 0, "Choose a password for protecting your files.",
		`Reading Password from stdin`,
		`You can now mount it using: gocryptfs "my cipher" MOUNTPOINT`)
	// The password was the stdin line: -passwd with it as the old password works.
	testutil.Expect(t, runWith(t, testutil.RunOptions{Stdin: "pw from stdin\nnew\n"}, "-passwd", filepath.Join(parent, "my cipher")), 0)
	// Relative paths that climb up are shown absolute.
	sub := filepath.Join(parent, "sub")
	os.Mkdir(sub, 0o700)
	other := filepath.Join(parent, "other")
	os.Mkdir(other, 0o700)
	r = runWith(t, testutil.RunOptions{Dir: sub}, "-init", "-scryptn", "10", "-extpass", "echo x", "../other")
	testutil.Expect(t, r, 0, "You can now mount it using: gocryptfs "+other+" MOUNTPOINT")
}

func TestInitCustomConfig(t *testing.T) {
	dir := newDir(t)
	conf := filepath.Join(t.TempDir(), "my.conf")
	r := run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-config", conf, dir)
	testutil.Expect(t, r, 0, "Using config file at custom location "+conf)
	if _, err := os.Stat(conf); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gocryptfs.conf")); err == nil {
		t.Error("gocryptfs.conf written into CIPHERDIR despite -config")
	}
	testutil.Expect(t, run(t, "-info", "-config", conf, dir), 0, "FeatureFlags:")
	// A stale temporary file makes writing the config fail with 24.
	conf2 := filepath.Join(t.TempDir(), "other.conf")
	os.WriteFile(conf2+".tmp", nil, 0o600)
	testutil.Expect(t, run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-config", conf2, newDir(t)), 24)
}

func TestInitReverse(t *testing.T) {
	dir := newDir(t)
	os.WriteFile(filepath.Join(dir, "existing"), []byte("x"), 0o600)
	r := run(t, "-init", "-reverse", "-scryptn", "10", "-extpass", "echo test", dir)
	testutil.Expect(t, r, 0, "The gocryptfs-reverse filesystem has been created successfully.",
		"You can now mount it using: gocryptfs -reverse "+dir+" MOUNTPOINT")
	if _, err := os.Stat(filepath.Join(dir, ".gocryptfs.reverse.conf")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gocryptfs.diriv")); err == nil {
		t.Error("reverse -init must not write gocryptfs.diriv")
	}
	testutil.Expect(t, run(t, "-info", "-reverse", dir), 0, "AESSIV", "contentEncryption: AES-SIV-512")
	testutil.Expect(t, run(t, "-init", "-reverse", "-scryptn", "10", "-extpass", "echo test", dir), 7)
}

func TestInitMasterkey(t *testing.T) {
	key := "00010203-04050607-08090a0b-0c0d0e0f-10111213-14151617-18191a1b-1c1d1e1f"
	dir := newDir(t)
	r := run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-masterkey", key, dir)
	testutil.Expect(t, r, 0, "Using explicit master key.")
	// The filesystem must be usable both with the password and the key.
	testutil.RequireFuse(t)
	mnt := mountFS(t, dir, "-extpass", "echo test")
	if err := os.WriteFile(filepath.Join(mnt, "f"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.UnmountDir(t, mnt)
	mnt2 := mountFS(t, dir, "-masterkey", key)
	if b, err := os.ReadFile(filepath.Join(mnt2, "f")); err != nil || string(b) != "data" {
		t.Fatalf("read through -masterkey mount: %q %v", b, err)
	}
}

func TestZerokey(t *testing.T) {
	dir := newDir(t)
	testutil.Expect(t, run(t, "-init", "-scryptn", "10", "-extpass", "echo test", "-zerokey", dir), 0)
	testutil.RequireFuse(t)
	mnt := mountFS(t, dir, "-zerokey")
	if err := os.WriteFile(filepath.Join(mnt, "f"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.UnmountDir(t, mnt)
	mnt = mountFS(t, dir, "-masterkey", strings.Repeat("0", 64))
	if b, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || string(b) != "data" {
		t.Fatalf("%q %v", b, err)
	}
}
