package unlock_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
	"gocryptfs/internal/unlock"
)

// kinds are the error kinds of the package; every error has exactly one.
var kinds = []error{unlock.ErrConfig, unlock.ErrConfigRefused, unlock.ErrNoSlot, unlock.ErrSecret,
	unlock.ErrWrongSecret, unlock.ErrKDF, unlock.ErrFIDO2}

// wantKind fails unless err is of kind alone and its message contains msg.
func wantKind(t *testing.T, err, kind error, msg string) {
	t.Helper()
	n := 0
	for _, k := range kinds {
		if errors.Is(err, k) {
			n++
		}
	}
	if !errors.Is(err, kind) || n != 1 || !strings.Contains(fmt.Sprint(err), msg) {
		t.Errorf("error %q: want kind %q only (has %d kinds) and a message with %q", err, kind, n, msg)
	}
}

// newConf writes a config with a password slot ("test") and a key-file
// slot (the returned file) and returns its path, the key file and the
// master key.
func newConf(t *testing.T) (conf, keyFile string, mk []byte) {
	t.Helper()
	dir := t.TempDir()
	conf = filepath.Join(dir, "gocryptfs.conf")
	cf, mk, err := configfile.Create(configfile.CreateArgs{Path: conf, Password: []byte("test"), Creator: "test", LogN: configfile.ScryptMinLogN})
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("key file\x00bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cf.AddSlot(mk, []byte("key file\x00bytes"), configfile.SlotSpec{Kind: configfile.SlotKeyFile, ScryptLogN: configfile.ScryptMinLogN}); err != nil {
		t.Fatal(err)
	}
	if err := cf.WriteFile(); err != nil {
		t.Fatal(err)
	}
	return conf, keyFile, mk
}

// password is a Source that reads pw as a line of stdin.
func password(pw string) *readpassword.Source {
	return &readpassword.Source{Stdin: strings.NewReader(pw + "\n")}
}

func load(t *testing.T, conf string) *configfile.ConfFile {
	t.Helper()
	cf, _, err := unlock.LoadConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestOpen opens each kind of slot and checks the errors of the
// secrets that do not fit.
func TestOpen(t *testing.T) {
	conf, keyFile, mk := newConf(t)
	cf := load(t, conf)
	for _, c := range []struct {
		name string
		s    unlock.Secret
		slot int
	}{
		{"password", unlock.Secret{Password: password("test")}, 0},
		{"key file", unlock.Secret{KeyFile: keyFile, Password: password("unused")}, 1},
	} {
		got, slot, err := unlock.Open(cf, c.s, unlock.Options{})
		if err != nil || slot != c.slot || !bytes.Equal(got, mk) {
			t.Errorf("%s: slot %d, key %x, %v; want slot %d, key %x", c.name, slot, got, err, c.slot, mk)
		}
	}
	_, _, err := unlock.Open(cf, unlock.Secret{Password: password("wrong")}, unlock.Options{})
	wantKind(t, err, unlock.ErrWrongSecret, "Password incorrect.")
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("other"), 0o600)
	_, _, err = unlock.Open(cf, unlock.Secret{KeyFile: other}, unlock.Options{})
	wantKind(t, err, unlock.ErrWrongSecret, "The key file does not unlock any slot.")
	_, _, err = unlock.Open(cf, unlock.Secret{KeyFile: filepath.Join(t.TempDir(), "missing")}, unlock.Options{})
	wantKind(t, err, unlock.ErrSecret, "Cannot read key file")
	_, _, err = unlock.Open(cf, unlock.Secret{Password: password("")}, unlock.Options{})
	wantKind(t, err, unlock.ErrSecret, "empty")
	if !errors.Is(err, readpassword.ErrPassword) {
		t.Errorf("password error %v lost its readpassword kind", err)
	}
	_, _, err = unlock.Open(cf, unlock.Secret{FIDO2Device: "/dev/none"}, unlock.Options{NoSlotHint: "use the other flags."})
	wantKind(t, err, unlock.ErrNoSlot, "This filesystem has no fido2 key slot (it has: [password keyfile]); use the other flags.")
}

// TestOpenSkipped: a damaged slot is passed to Options.Skipped and not
// tried; when no slot of the kind is left, the config is refused.
func TestOpenSkipped(t *testing.T) {
	conf, keyFile, _ := newConf(t)
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	slots := m["KeySlots"].([]any)
	ks := slots[len(slots)-1].(map[string]any)
	if ks["Kind"] != "keyfile" {
		t.Fatalf("last slot: %v", ks)
	}
	ks["Scrypt"].(map[string]any)["N"] = 512 // below the minimum
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	os.Chmod(conf, 0o600)
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cf := load(t, conf)
	var skipped []int
	_, _, err = unlock.Open(cf, unlock.Secret{KeyFile: keyFile}, unlock.Options{Skipped: func(i int, err error) { skipped = append(skipped, i) }})
	wantKind(t, err, unlock.ErrConfigRefused, "Config file "+conf+": ")
	if len(skipped) != 1 || skipped[0] != 1 { // slot 0 is in the reference's fields
		t.Errorf("skipped %v, want [1]", skipped)
	}
	// The password slot still opens.
	if _, _, err := unlock.Open(cf, unlock.Secret{Password: password("test")}, unlock.Options{}); err != nil {
		t.Error(err)
	}
}

// TestOpenFIDO2 registers a FIDO2 slot with the stand-in tools of
// internal/fido2/testdata and opens it; a password cannot open a
// FIDO2-only config, and a failing token is ErrFIDO2.
func TestOpenFIDO2(t *testing.T) {
	td, err := filepath.Abs("../fido2/testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", td+":"+os.Getenv("PATH"))
	t.Setenv("FIDO2_STANDIN_FAIL", "")
	var stderr bytes.Buffer
	opts := fido2.Options{Stderr: &stderr}
	secret, params, err := unlock.NewFIDO2Secret("/dev/standin", "myfs", []string{"pin=false"}, opts)
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, stderr.String())
	}
	conf := filepath.Join(t.TempDir(), "gocryptfs.conf")
	cf, mk, err := configfile.Create(configfile.CreateArgs{Path: conf, Password: secret, Creator: "test", LogN: configfile.ScryptMinLogN, FIDO2: params})
	if err != nil || cf.WriteFile() != nil {
		t.Fatal(err)
	}
	cf = load(t, conf)
	got, _, err := unlock.Open(cf, unlock.Secret{FIDO2Device: "/dev/standin", FIDO2: opts}, unlock.Options{})
	if err != nil || !bytes.Equal(got, mk) {
		t.Errorf("FIDO2: key %x, %v; want %x", got, err, mk)
	}
	_, _, err = unlock.Open(cf, unlock.Secret{Password: password("test")}, unlock.Options{NoSlotHint: "hint"})
	wantKind(t, err, unlock.ErrNoSlot, "Masterkey encrypted using FIDO2 token; need to use the -fido2 option.")
	t.Setenv("FIDO2_STANDIN_FAIL", "assert")
	_, _, err = unlock.Open(cf, unlock.Secret{FIDO2Device: "/dev/standin", FIDO2: opts}, unlock.Options{})
	wantKind(t, err, unlock.ErrFIDO2, "fido2-assert")
	_, _, err = unlock.NewFIDO2Secret("/dev/standin", "myfs", nil, opts)
	wantKind(t, err, unlock.ErrFIDO2, "fido2-assert")
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	_, _, err := unlock.LoadConfig(filepath.Join(dir, "missing"))
	wantKind(t, err, unlock.ErrConfig, "Cannot open config file: ")
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	_, _, err = unlock.LoadConfig(bad)
	wantKind(t, err, unlock.ErrConfig, "Cannot open config file: ")
	conf, _, _ := newConf(t)
	data, _ := os.ReadFile(conf)
	v3 := filepath.Join(dir, "v3.conf")
	os.WriteFile(v3, bytes.Replace(data, []byte(`"Version": 2`), []byte(`"Version": 3`), 1), 0o600)
	_, _, err = unlock.LoadConfig(v3)
	wantKind(t, err, unlock.ErrConfigRefused, "is not supported")
	if _, raw, err := unlock.LoadConfig(conf); err != nil || !bytes.Equal(raw.Data, data) {
		t.Errorf("LoadConfig: %v, raw %+v", err, raw)
	}
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	_, err := unlock.ReadKeyFile(empty)
	wantKind(t, err, unlock.ErrSecret, "is empty")
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 8<<20+1), 0o600)
	_, err = unlock.ReadKeyFile(big)
	wantKind(t, err, unlock.ErrSecret, "is larger than 8388608 bytes")
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, make([]byte, 8<<20), 0o600)
	if b, err := unlock.ReadKeyFile(ok); err != nil || len(b) != 8<<20 {
		t.Errorf("8 MiB key file: %d bytes, %v", len(b), err)
	}
}

func TestMasterKey(t *testing.T) {
	const hex = "00010203-04050607-08090a0b-0c0d0e0f-10111213-14151617-18191a1b-1c1d1e1f"
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	for _, c := range []struct {
		given string
		zero  bool
		stdin string
		want  []byte
	}{
		{"", false, "", nil},
		{"", true, "", make([]byte, 32)},
		{hex, false, "", key},
		{"stdin", false, hex + "\n", key},
	} {
		got, err := unlock.MasterKey(c.given, c.zero, &readpassword.Source{Stdin: strings.NewReader(c.stdin)}, nil)
		if err != nil || !bytes.Equal(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("MasterKey(%q, %v) = %x, %v; want %x", c.given, c.zero, got, err, c.want)
		}
	}
	if _, err := unlock.MasterKey("abcd", false, nil, nil); !errors.Is(err, readpassword.ErrMasterKey) {
		t.Errorf("short key: %v, want readpassword.ErrMasterKey", err)
	}
}

// TestSlotTaken finds the slot that a new secret already opens, except
// the one being replaced.
func TestSlotTaken(t *testing.T) {
	conf, _, _ := newConf(t)
	cf := load(t, conf)
	for _, c := range []struct {
		kind   configfile.SlotKind
		secret string
		except int
		want   int
	}{
		{configfile.SlotPassword, "test", -1, 0},
		{configfile.SlotPassword, "test", 0, -1},
		{configfile.SlotPassword, "new", -1, -1},
		{configfile.SlotKeyFile, "key file\x00bytes", -1, 1},
		{configfile.SlotKeyFile, "test", -1, -1},
		{configfile.SlotFIDO2, "test", -1, -1},
	} {
		if got := unlock.SlotTaken(cf, c.kind, []byte(c.secret), c.except, nil); got != c.want {
			t.Errorf("SlotTaken(%s, %q, except %d) = %d, want %d", c.kind, c.secret, c.except, got, c.want)
		}
	}
}
