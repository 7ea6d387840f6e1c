package main

import (
	"regexp"
	"strings"

	"github.com/hanwen/go-fuse/v2/fs"
)

// masterkeyValue matches the value of a -masterkey flag written as
// -masterkey=HEX or inside -o masterkey=HEX,...
var masterkeyValue = regexp.MustCompile(`(masterkey=)[^,]*`)

// redactedArgs returns the command line arguments with the master key
// replaced, fit for a debug log that may end up in syslog.
func redactedArgs(args []string) []string {
	out := make([]string, len(args))
	for i, arg := range args {
		if i > 0 && strings.TrimLeft(args[i-1], "-") == "masterkey" {
			arg = "***"
		}
		out[i] = masterkeyValue.ReplaceAllString(arg, "${1}***")
	}
	return out
}

// logArgs logs, with -d, the command line this run was started with.
func logArgs(e *env) {
	e.log.Debug("command line", "args", redactedArgs(e.args))
}

// logSettings logs, with -d, the settings this mount really runs with:
// those from the config file, the flags after normalization and the
// options handed to the kernel.
func logSettings(e *env, a *argContainer, f features, opts *fs.Options) {
	mo := &opts.MountOptions
	e.log.Debug("effective settings",
		"cipherdir", a.cipherdir, "mountpoint", a.mountpoint, "reverse", a.reverse,
		"cipher", f.Cipher.String(), "hkdf", f.HKDF,
		"plaintextnames", f.PlaintextNames, "deterministic_names", f.DeterministicNames,
		"raw64", f.Raw64, "longnamemax", f.LongNameMax,
		"kernel_options", strings.Join(mo.Options, ","), "allow_other", mo.AllowOther,
		"fsname", mo.FsName, "max_write", mo.MaxWrite, "locks", mo.EnableLocks,
		"acl", mo.EnableAcl, "serialize_reads", mo.SyncRead,
		"cache_timeout", *opts.EntryTimeout, "sharedstorage", a.sharedstorage,
		"kernel_cache", a.kernelCache, "noprealloc", a.noprealloc, "noxattr", a.noxattr,
		"idle", a.idle, "fusedebug", mo.Debug, "uring", a.uring)
}
