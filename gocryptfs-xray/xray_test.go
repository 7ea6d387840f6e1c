package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// xray runs the tool in-process.
func xray(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"gocryptfs-xray"}, args...), strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

// TestVectorFiles rebuilds the files of TV-7, TV-10 and TV-14 from their
// recorded headers and nonces, checks the ciphertext against the vectors,
// and compares the xray output with the reference output byte for byte.
func TestVectorFiles(t *testing.T) {
	for _, c := range testutil.VectorFiles() {
		t.Run(c.Name, func(t *testing.T) {
			data := coretest.EncryptVectorFile(t, c)
			if c.CipherHex != "" && !bytes.Equal(data, testutil.MustHex(t, c.CipherHex)) {
				t.Errorf("ciphertext differs from the vector:\n got  %x\n want %s", data, strings.ReplaceAll(c.CipherHex, " ", ""))
			}
			if c.CipherSHA256 != "" {
				if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != c.CipherSHA256 {
					t.Errorf("SHA-256 %x, want %s", sum, c.CipherSHA256)
				}
			}
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := xray(t, "", append(c.XrayFlags, p)...)
			if out != c.XrayOutput || errOut != "" || code != 0 {
				t.Errorf("got exit %d, stdout:\n%s\nstderr: %q\nwant:\n%s", code, out, errOut, c.XrayOutput)
			}
		})
	}
}

func TestInspectSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	ce := coretest.New(t, coretest.Options{HKDF: true}).CE
	id := testutil.MustHex(t, "00112233445566778899aabbccddeeff")
	hdr := append([]byte{0, 2}, id...)
	block := func(no uint64, n int) []byte {
		b, err := ce.EncryptBlockNonce(nil, bytes.Repeat([]byte{1}, n), no, id, testutil.MustHex(t, "0102030405060708090a0b0c0d0e0f10"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hole := make([]byte, 4128)
	var withHole []byte
	withHole = append(withHole, hdr...)
	withHole = append(withHole, hole...)
	withHole = append(withHole, block(1, 5)...)
	zeroTag := strings.Repeat("0", 32)
	for _, c := range []struct {
		name          string
		data          []byte
		flags         []string
		stdout, errIs string
		code          int
	}{
		{"empty", nil, nil, "empty file\n", "", 0},
		{"short header", []byte("0123456789"), nil, "", "incomplete file header: read 10 bytes, want 18\n", 1},
		{"bad header", append([]byte{0, 3}, id...), nil, "", "ParseHeader: invalid version, want=2 have=3. Header hexdump: 0003" + hex.EncodeToString(id) + "\n", 1},
		{"all-zero header", make([]byte, 18), nil, "", "ParseHeader: header is all-zero", 1},
		{"header only", hdr, nil, "Header: Version: 2, Id: 00112233445566778899aabbccddeeff, assuming AES-GCM-256 mode\n", "", 0},
		{"hole", withHole, nil,
			"Header: Version: 2, Id: 00112233445566778899aabbccddeeff, assuming AES-GCM-256 mode\n" +
				"Block  0: IV: " + zeroTag + ", Tag: " + zeroTag + ", Offset:    18 Len: 4128\n" +
				"Block  1: IV: 0102030405060708090a0b0c0d0e0f10, Tag: " + hex.EncodeToString(block(1, 5)[21:]) + ", Offset:  4146 Len: 37\n",
			"", 0},
		{"truncated block", append(append([]byte{}, hdr...), block(0, 5)[:32]...), nil,
			"Header: Version: 2, Id: 00112233445566778899aabbccddeeff, assuming AES-GCM-256 mode\n",
			"corrupt block: truncated data, len=32\n", 1},
		{"minimal block", append(append([]byte{}, hdr...), block(0, 1)...), nil,
			"Header: Version: 2, Id: 00112233445566778899aabbccddeeff, assuming AES-GCM-256 mode\n" +
				"Block  0: IV: 0102030405060708090a0b0c0d0e0f10, Tag: " + hex.EncodeToString(block(0, 1)[17:]) + ", Offset:    18 Len: 33\n",
			"", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			os.WriteFile(p, c.data, 0o644)
			out, errOut, code := xray(t, "", append(c.flags, p)...)
			if out != c.stdout || !strings.HasPrefix(errOut, c.errIs) || (c.errIs == "") != (errOut == "") || code != c.code {
				t.Errorf("got exit %d\nstdout: %q\nstderr: %q\nwant exit %d\nstdout: %q\nstderr: %q", code, out, errOut, c.code, c.stdout, c.errIs)
			}
		})
	}
	if _, errOut, code := xray(t, "", filepath.Join(dir, "nonexistent")); code != 1 || errOut == "" {
		t.Errorf("nonexistent file: exit %d, %q", code, errOut)
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		stdout  string // prefix
		stderr  string // substring
		wantOut bool
	}{
		{"no args", nil, 1, "", "Usage: gocryptfs-xray", false},
		{"two args", []string{"a", "b"}, 1, "", "Usage: gocryptfs-xray", false},
		{"unknown flag", []string{"-sep", "x", "f"}, 1, "", "flag provided but not defined: -sep", false},
		{"help", []string{"-h"}, 0, "gocryptfs-xray ", "", true},
		{"help long", []string{"--help"}, 0, "gocryptfs-xray ", "", true},
		{"version", []string{"-version"}, 0, "gocryptfs-xray ", "", true},
		{"two ops", []string{"-dumpmasterkey", "-encrypt-paths", "f"}, 1, "", "fatal: 2 operations were requested\n", false},
		{"three ops", []string{"-dumpmasterkey", "-encrypt-paths", "--decrypt-paths", "f"}, 1, "", "fatal: 3 operations were requested\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := xray(t, "", c.args...)
			if code != c.code || !strings.HasPrefix(out, c.stdout) || !strings.Contains(errOut, c.stderr) || c.wantOut == (out == "") {
				t.Errorf("exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
			}
		})
	}
	out, _, _ := xray(t, "", "-h")
	for _, w := range []string{"-dumpmasterkey", "-encrypt-paths", "-decrypt-paths", "-0", "-aessiv", "-xchacha", "-fido2", "-keyfile", "Examples:"} {
		if !strings.Contains(out, w) {
			t.Errorf("-h output lacks %q", w)
		}
	}
	if v, _, _ := xray(t, "", "-version"); strings.Count(v, "\n") != 1 || !strings.Contains(v, "; 0000-00-00 go") {
		t.Errorf("-version: %q", v)
	}
}

// tv2Conf builds the hand-made configs of TV-2.
func tv2Conf(t *testing.T, flags, encKeyHex string) string {
	t.Helper()
	return `{"Creator":"hand","EncryptedKey":"` + base64.StdEncoding.EncodeToString(testutil.MustHex(t, encKeyHex)) +
		`","ScryptObject":{"Salt":"QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=","N":1024,"R":8,"P":1,"KeyLen":32},` +
		`"Version":2,"FeatureFlags":[` + flags + `]}`
}

func TestDumpMasterKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	tv1 := write("tv1.conf", testutil.TV1Config)
	tv2a := write("tv2a.conf", tv2Conf(t, `"GCMIV128","DirIV","EMENames","LongNames"`,
		"a0a1a2a3a4a5a6a7a8a9aaab 71c78ab8c332ceaf178751d2a859b7518ce8dc30bf609bd2055a33305d18f899 4e1266307887c9f5cb35c4b0379230dc"))
	tv2b := write("tv2b.conf", tv2Conf(t, `"HKDF","GCMIV128","DirIV","EMENames","LongNames","Raw64"`,
		"b0b1b2b3b4b5b6b7b8b9babbbcbdbebf ac487236fe541983851209569f5d69e293b91e74f40eb49a0a18e839fc6b6f51 ac0ba28a2526cf21e84a5e0b4cfcc359"))
	invalid := write("invalid.conf", strings.Replace(testutil.TV1Config, `"Version": 2`, `"Version": 3`, 1))
	unknownFlag := write("unknown.conf", strings.Replace(testutil.TV1Config, `"Raw64"`, `"Raw64", "Bogus"`, 1))
	malformed := write("malformed.conf", "{not json")
	fido := write("fido.conf", strings.NewReplacer(`"Raw64"`, `"Raw64", "FIDO2"`,
		`"Version": 2,`, `"Version": 2, "FIDO2": {"CredentialID": "AAAA", "HMACSalt": "AAAA", "AssertOptions": null},`).Replace(testutil.TV1Config))
	const key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	for _, c := range []struct {
		name, file, stdin string
		args              []string
		code              int
		stdout, stderr    string
	}{
		{"TV-1", tv1, "test\n", nil, 0, key, ""},
		{"TV-1 without newline", tv1, "test", nil, 0, key, ""},
		{"TV-1 only first line", tv1, "test\nsecond line\n", nil, 0, key, ""},
		{"TV-2a legacy", tv2a, "test\n", nil, 0, key, ""},
		{"TV-2b", tv2b, "test\n", nil, 0, key, ""},
		{"wrong password", tv2b, "wrong\n", nil, 8, "", "Password incorrect.\n"},
		{"empty password", tv1, "\n", nil, 9, "", "empty"},
		{"invalid version", invalid, "test\n", nil, 27, "", "unsupported"},
		{"unknown flag", unknownFlag, "test\n", nil, 27, "", "Bogus"},
		{"malformed", malformed, "test\n", nil, 11, "", "Cannot open config file"},
		{"missing", filepath.Join(dir, "nonexistent"), "test\n", nil, 11, "", "no such file"},
		{"fido2 without -fido2", fido, "test\n", nil, 1, "", "-fido2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := xray(t, c.stdin, append(append([]string{"-dumpmasterkey"}, c.args...), c.file)...)
			if code != c.code || out != c.stdout || !strings.Contains(errOut, c.stderr) || (c.stderr == "") != (errOut == "") {
				t.Errorf("exit %d (want %d)\nstdout: %q (want %q)\nstderr: %q (want %q)", code, c.code, out, c.stdout, errOut, c.stderr)
			}
		})
	}
}

// TestDumpMasterKeyKeyFile: -keyfile opens a key-file slot, and the master
// key it prints is the one the password slot gives.
func TestDumpMasterKeyKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyFile := write("key", []byte("key file\x00bytes\n"))
	conf := filepath.Join(dir, "gocryptfs.conf")
	cf, mk, err := configfile.Create(configfile.CreateArgs{Path: conf, Password: []byte("test"), Creator: "test", LogN: configfile.ScryptMinLogN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cf.AddSlot(mk, []byte("key file\x00bytes\n"), configfile.SlotSpec{Kind: configfile.SlotKeyFile, ScryptLogN: configfile.ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	if err := cf.WriteFile(); err != nil {
		t.Fatal(err)
	}
	want := hex.EncodeToString(mk) + "\n"
	byPassword, errOut, code := xray(t, "test\n", "-dumpmasterkey", conf)
	if code != 0 || byPassword != want || errOut != "" {
		t.Fatalf("password: exit %d, stdout %q, stderr %q; want %q", code, byPassword, errOut, want)
	}
	byKeyFile, errOut, code := xray(t, "", "-dumpmasterkey", "-keyfile", keyFile, conf)
	if code != 0 || byKeyFile != byPassword || errOut != "" {
		t.Errorf("-keyfile: exit %d, stdout %q, stderr %q; want the password's %q", code, byKeyFile, errOut, byPassword)
	}
	// A config with only a key-file slot.
	only := filepath.Join(dir, "only.conf")
	cfOnly, mkOnly, err := configfile.Create(configfile.CreateArgs{Path: only, Password: []byte("x"), Creator: "test", LogN: configfile.ScryptMinLogN})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfOnly.ReplaceSlot(0, mkOnly, []byte("key file\x00bytes\n"), configfile.SlotSpec{Kind: configfile.SlotKeyFile}); err != nil {
		t.Fatal(err)
	}
	if err := cfOnly.WriteFile(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
		stdout      string
		stderr      string
	}{
		{"key-file-only config", "", []string{"-keyfile", keyFile, only}, 0, hex.EncodeToString(mkOnly) + "\n", ""},
		{"wrong key file", "", []string{"-keyfile", write("other", []byte("other")), conf}, 8, "", "The key file does not unlock any slot.\n"},
		{"empty key file", "", []string{"-keyfile", write("empty", nil), conf}, 9, "", "is empty"},
		{"missing key file", "", []string{"-keyfile", filepath.Join(dir, "missing"), conf}, 9, "", "Cannot read key file"},
		{"password for a key-file-only config", "test\n", []string{only}, 1, "", "The config has no password key slot."},
		{"-keyfile with -fido2", "", []string{"-keyfile", keyFile, "-fido2", "/dev/null", conf}, 1, "", "-keyfile cannot be combined with -fido2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := xray(t, c.stdin, append([]string{"-dumpmasterkey"}, c.args...)...)
			if code != c.code || out != c.stdout || !strings.Contains(errOut, c.stderr) || (c.stderr == "") != (errOut == "") {
				t.Errorf("exit %d (want %d)\nstdout: %q (want %q)\nstderr: %q (want %q)", code, c.code, out, c.stdout, errOut, c.stderr)
			}
		})
	}
	// -keyfile is for -dumpmasterkey only: refused, not ignored, elsewhere.
	if _, errOut, code := xray(t, "", "-keyfile", keyFile, conf); code != 1 || !strings.Contains(errOut, "-keyfile only works with -dumpmasterkey") {
		t.Errorf("-keyfile without -dumpmasterkey: exit %d, stderr %q; want 1", code, errOut)
	}
}
