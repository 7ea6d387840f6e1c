package unlock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fido2"
	"gocryptfs/internal/readpassword"
	"gocryptfs/internal/tlog"
)

// LoadConfig loads and validates the config at path. A config refused by
// validation (also a filesystem of gocryptfs v0.6 or older) is
// ErrConfigRefused; a file that cannot be read or parsed is ErrConfig
// ("Cannot open config file: …"). It also returns the bytes it parsed and
// the stat of the file read: a reverse mount shows exactly those as the
// view's gocryptfs.conf.
func LoadConfig(path string) (*configfile.ConfFile, *configfile.Raw, error) {
	cf, raw, err := configfile.LoadRaw(path)
	switch {
	case err == nil:
		return cf, raw, nil
	case errors.Is(err, configfile.ErrTooOld):
		return nil, nil, withCause(ErrConfigRefused, err, "Filesystem too old for this gocryptfs version: %v", err)
	case errors.Is(err, configfile.ErrInvalid):
		return nil, nil, withCause(ErrConfigRefused, err, "Config file %s is not supported: %v", path, err)
	}
	return nil, nil, withCause(ErrConfig, err, "%s", CannotOpen(err))
}

// CannotOpen words the error of a config that could not be loaded (its
// Cause) as gocryptfs does for a missing or unreadable one, and as
// gocryptfs-xray does for every one.
func CannotOpen(err error) string { return fmt.Sprintf("Cannot open config file: %v", Cause(err)) }

// maxKeyFileSize bounds a key file (LUKS uses the same 8 MiB), so that
// -keyfile /dev/urandom fails instead of eating memory.
const maxKeyFileSize = 8 << 20

// ReadKeyFile returns the bytes of a key file (the whole file is the
// secret). Unreadable, empty and oversized files are ErrSecret, like an
// unreadable password.
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errorf(ErrSecret, "Cannot read key file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize+1))
	switch {
	case err != nil:
		cryptocore.Wipe(data)
		return nil, errorf(ErrSecret, "Cannot read key file %s: %v", path, err)
	case len(data) == 0:
		return nil, errorf(ErrSecret, "Key file %s is empty", path)
	case len(data) > maxKeyFileSize:
		cryptocore.Wipe(data)
		return nil, errorf(ErrSecret, "Key file %s is larger than %d bytes", path, maxKeyFileSize)
	}
	return data, nil
}

// NewFIDO2Secret registers a new credential for user (the CIPHERDIR's base
// name) on the FIDO2 token at device and asks it for the hmac-secret of
// a fresh salt: the secret of a new FIDO2 slot (-init -fido2, -addkey
// -newfido2). It returns the secret and the parameters to store with the
// slot; assertOptions are passed to every later fido2-assert. Errors are
// ErrFIDO2.
func NewFIDO2Secret(device, user string, assertOptions []string, opts fido2.Options) ([]byte, *configfile.FIDO2Params, error) {
	cred, err := fido2.Register(device, user, opts)
	if err != nil {
		return nil, nil, err
	}
	salt := fido2.NewSalt()
	secret, err := fido2.Secret(device, cred, salt, assertOptions, opts)
	if err != nil {
		return nil, nil, err
	}
	return secret, &configfile.FIDO2Params{CredentialID: cred, HMACSalt: salt, AssertOptions: assertOptions}, nil
}

// MasterKey returns the key given by -masterkey (hex, or "stdin": read
// through src) or -zerokey, or nil when neither is used. A key on the
// command line is visible in ps, and the zero key protects nothing: both
// are said loudly, but as notices (not warnings), as the reference does,
// because -wpanic panics at warnings and test harnesses mount with
// "-wpanic -zerokey". Errors are readpassword's (ErrMasterKey).
func MasterKey(given string, zero bool, src *readpassword.Source, log *slog.Logger) ([]byte, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch {
	case zero:
		log.Info("Using all-zero dummy master key.", tlog.Yellow())
		log.Info("WARNING: -zerokey: the master key is all zeros, anyone can decrypt this data. Only use it for testing.", tlog.Yellow())
		return make([]byte, cryptocore.KeyLen), nil
	case given == "stdin":
		return src.MasterKeyFromStdin()
	case given != "":
		log.Info("Using explicit master key.", tlog.Yellow())
		log.Info("THE MASTER KEY IS VISIBLE VIA \"ps ax\" AND MAY BE STORED IN YOUR SHELL HISTORY!\n"+
			"ONLY USE THIS MODE FOR EMERGENCIES", tlog.Yellow())
		return readpassword.ParseMasterKey(given)
	}
	return nil, nil
}

// errNotThisSlot makes UnlockWith pass over the slot being replaced.
var errNotThisSlot = errors.New("slot being replaced")

// SlotTaken returns the index of a slot of cf of the given kind, other
// than slot except (-1 for none), that secret (a new password or key
// file) opens, or -1. Two slots with one password would let the old
// password keep opening the filesystem after -passwd changed one of them.
// It costs one KDF run per slot of the kind; slots skipped as damaged or
// over the KDF budget cannot be checked. FIDO2 slots are never taken: a
// new one always gets a new credential. log (nil discards) gets a debug
// message when the check runs.
func SlotTaken(cf *configfile.ConfFile, kind configfile.SlotKind, secret []byte, except int, log *slog.Logger) int {
	if kind == configfile.SlotFIDO2 || !cf.HasSlotKind(kind) {
		return -1
	}
	if log != nil {
		log.Debug("checking that no other slot takes the new secret", "kind", kind)
	}
	sf := func(i int, _ *configfile.KeySlot) ([]byte, error) {
		if i == except {
			return nil, errNotThisSlot
		}
		return bytes.Clone(secret), nil
	}
	mk, i, err := cf.UnlockWith(kind, sf, configfile.UnlockOptions{})
	if err != nil {
		return -1
	}
	cryptocore.Wipe(mk)
	return i
}
