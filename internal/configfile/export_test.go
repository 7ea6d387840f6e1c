package configfile

// SetPath changes where WriteFile writes the config (tests only).
func (cf *ConfFile) SetPath(path string) { cf.path = path }

// Unlock is UnlockWith with the default options: this machine's KDF
// budget, and skipped slots reported only through the returned error.
// The binaries unlock through package unlock, which passes its own
// options; the tests here use the defaults.
func (cf *ConfFile) Unlock(kind SlotKind, secret SecretFunc) ([]byte, int, error) {
	return cf.UnlockWith(kind, secret, UnlockOptions{})
}
