package main

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/cliflags"
	"gocryptfs/internal/configfile"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fuseserve"
)

// argContainer holds the parsed command line (docs/cli.md section 3). Field
// names follow the flag names.
type argContainer struct {
	// Actions.
	init, passwd, info, fsck, speed, version, help, hh bool
	// Modifiers of -fsck.
	repair, json bool

	// Filesystem creation options.
	aessiv, xchacha, plaintextnames, deterministicNames bool
	longnamemax                                         uint8
	scryptn                                             int
	hkdf, raw64, reverse                                bool
	fido2                                               string
	fido2AssertOptions                                  []string
	devrandom                                           bool

	// Mount options.
	fg, nosyslog                   bool
	notifypid                      int
	allowOther                     bool
	forceOwnerStr                  string
	ro, rw, dev, nodev             bool
	suid, nosuid, exec, noexec     bool
	ko, context, fsname            string
	acl, nonempty, kernelCache     bool
	sharedstorage, serializeReads  bool
	noprealloc, noxattr            bool
	noWriteCache                   bool
	idle                           time.Duration
	badname                        []string
	ctlsock                        string
	longnames                      bool
	exclude, excludeWildcard       []string
	excludeFrom                    []string
	oneFileSystem, zerokey, nofail bool
	forcedecode                    bool

	// Key slots (-addkey, -removekey; keyslot_cmd.go).
	addkey, removekey   bool
	keyfile, newkeyfile string
	newfido2, label     string
	argon2id            bool
	argon2idTime        int
	argon2idMemory      int

	// Common options.
	config, masterkey             string
	extpass, passfile             []string
	openssl                       string
	uring                         string
	quiet, debug, fusedebug       bool
	wpanic                        bool
	cpuprofile, memprofile, trace string

	// Positional arguments, made absolute by validate.
	cipherdir, mountpoint string
	// positional are the raw positional arguments in order.
	positional []string

	// Derived values, filled in by validate.
	forceOwner *fuse.Owner
	backend    cryptocore.Backend
	transport  fuseserve.Transport
	// set records which flags (canonical names) appeared on the command line.
	set map[string]bool
	// origArgs is the argv as given, for error messages.
	origArgs []string
}

// newFlagSet registers every flag of docs/cli.md section 3 with its default.
func newFlagSet(a *argContainer) *cliflags.Set {
	fs := cliflags.New()
	b := func(p *bool, usage string, names ...string) { fs.Add(p, "", usage, names...) }
	s := func(p *string, arg, usage string, names ...string) { fs.Add(p, arg, usage, names...) }
	l := func(p *[]string, arg, usage string, names ...string) { fs.Add(p, arg, usage, names...) }

	// Defaults that are not the zero value.
	a.scryptn = configfile.ScryptDefaultLogN
	a.hkdf, a.raw64, a.longnames = true, true, true
	a.openssl, a.uring = "auto", "auto"
	a.longnamemax = configfile.MaxLongNameMax

	// Actions.
	b(&a.init, "Initialize encrypted directory", "init")
	b(&a.passwd, "Change password", "passwd")
	b(&a.info, "Display information about CIPHERDIR", "info")
	b(&a.fsck, "Run a filesystem check on CIPHERDIR", "fsck")
	b(&a.repair, "With -fsck: repair what is found (quarantine + lost+found, never deletes)", "repair")
	b(&a.json, "With -fsck: one JSON object per finding and action, then a summary", "json")
	b(&a.speed, "Run crypto speed test", "speed")
	b(&a.version, "Print version and exit", "version")
	b(&a.help, "Short help text", "help")
	b(&a.hh, "Long help text listing all options", "hh")

	// Creation.
	b(&a.aessiv, "AES-SIV encryption (with -init, or -masterkey mounts)", "aessiv")
	b(&a.xchacha, "XChaCha20-Poly1305 encryption (with -init, or -masterkey mounts)", "xchacha")
	b(&a.plaintextnames, "Do not encrypt file names (with -init)", "plaintextnames")
	b(&a.deterministicNames, "Disable diriv file name randomisation (with -init)", "deterministic-names")
	fs.Add(&a.longnamemax, "uint8", "Hash encrypted names that are longer than this (62..255; 0 means 255)", "longnamemax")
	fs.Add(&a.scryptn, "int", "scrypt cost parameter as log2(N); range 10..28", "scryptn")
	b(&a.hkdf, "Use HKDF as an additional key derivation step (-masterkey mounts)", "hkdf")
	b(&a.raw64, "Use unpadded base64 for file names (-masterkey mounts)", "raw64")
	b(&a.reverse, "Reverse mode", "reverse")
	s(&a.fido2, "DEVICE", "Protect the master key using a FIDO2 token instead of a password", "fido2")
	l(&a.fido2AssertOptions, "OPTION", "Options passed to fido2-assert -t (repeatable)", "fido2-assert-option")
	b(&a.devrandom, "Obsolete, ignored", "devrandom")

	// Mount.
	b(&a.fg, "Stay in the foreground", "fg", "f")
	b(&a.nosyslog, "Do not redirect output to syslog when running in the background", "nosyslog")
	fs.Add(&a.notifypid, "int", "Send USR1 to the specified process after successful mount - used internally for daemonization", "notifypid")
	b(&a.allowOther, "Allow other users to access the filesystem. Only works if user_allow_other is set in /etc/fuse.conf", "allow_other")
	s(&a.forceOwnerStr, "UID:GID", "Present all files as owned by UID:GID; implies -allow_other", "force_owner")
	b(&a.ro, "Mount the filesystem read-only", "ro")
	b(&a.rw, "Mount the filesystem read-write", "rw")
	b(&a.dev, "Allow device files", "dev")
	b(&a.nodev, "Deny device files", "nodev")
	b(&a.suid, "Allow suid binaries", "suid")
	b(&a.nosuid, "Deny suid binaries", "nosuid")
	b(&a.exec, "Allow executables", "exec")
	b(&a.noexec, "Deny executables", "noexec")
	s(&a.ko, "OPTIONS", "Pass additional comma-separated options to the kernel", "ko")
	b(&a.acl, "Enforce ACLs", "acl")
	s(&a.context, "CONTEXT", "Set SELinux context (context= mount option)", "context")
	s(&a.fsname, "NAME", "Override the filesystem name (first column in df -T)", "fsname")
	b(&a.nonempty, "Allow mounting over a non-empty directory", "nonempty")
	b(&a.kernelCache, "Enable the FUSE kernel_cache option", "kernel_cache")
	b(&a.sharedstorage, "Make concurrent access to a shared CIPHERDIR safer", "sharedstorage")
	b(&a.serializeReads, "Serialize read operations", "serialize_reads")
	b(&a.noprealloc, "Disable preallocation before writing", "noprealloc")
	b(&a.noxattr, "Disable extended attribute operations", "noxattr")
	b(&a.noWriteCache, "Disable the kernel's writeback cache (off anyway with -sharedstorage)", "nowritecache")
	fs.Add(&a.idle, "duration", "Auto-unmount after specified idle duration (ignored in reverse mode); 0 means never", "idle", "i")
	l(&a.badname, "GLOB", "Glob pattern of invalid file names that should be shown (repeatable)", "badname")
	s(&a.ctlsock, "PATH", "Create control socket at specified path", "ctlsock")
	b(&a.longnames, "Store names longer than 175 bytes in extra files", "longnames")
	l(&a.exclude, "PATH", "Exclude relative path from reverse view (repeatable)", "exclude", "e")
	l(&a.excludeWildcard, "PATTERN", "Exclude path from reverse view, supporting wildcards (repeatable)", "exclude-wildcard", "ew")
	l(&a.excludeFrom, "FILE", "File from which to read exclusion patterns (repeatable)", "exclude-from")
	b(&a.oneFileSystem, "Don't cross filesystem boundaries (reverse mode)", "one-file-system")
	b(&a.zerokey, "Use all-zero dummy master key", "zerokey")
	b(&a.nofail, "Ignored for /etc/fstab compatibility", "nofail", "_netdev", "defaults")
	b(&a.forcedecode, "Obsolete, ignored", "forcedecode")

	// Common.
	s(&a.config, "FILE", "Use specified config file instead of CIPHERDIR/gocryptfs.conf", "config")
	s(&a.masterkey, "HEX", "Mount with explicit master key (or \"stdin\")", "masterkey")
	l(&a.extpass, "CMD", "Use external program for the password prompt (repeatable)", "extpass")
	l(&a.passfile, "FILE", "Read password from file (repeatable)", "passfile")
	s(&a.openssl, "auto|true|false", "Use OpenSSL instead of built-in Go crypto", "openssl")
	s(&a.uring, "auto|true|false", "Use FUSE over io_uring instead of /dev/fuse (auto: when the kernel offers it)", "uring")
	b(&a.quiet, "Quiet - silence informational messages", "quiet", "q")
	b(&a.debug, "Enable debug output", "debug", "d")
	b(&a.fusedebug, "Enable fuse library debug output", "fusedebug")
	b(&a.wpanic, "When encountering a warning, panic and exit immediately", "wpanic")
	s(&a.cpuprofile, "FILE", "Write cpu profile to specified file", "cpuprofile")
	s(&a.memprofile, "FILE", "Write memory profile to specified file", "memprofile")
	s(&a.trace, "FILE", "Write execution trace to file", "trace")

	// Key slots.
	b(&a.addkey, "Add a key slot (password; -newfido2 or -newkeyfile for other kinds)", "addkey")
	b(&a.removekey, "Remove the key slot that the given secret opens", "removekey")
	s(&a.keyfile, "FILE", "Unlock with the key-file slot that FILE opens", "keyfile")
	s(&a.newkeyfile, "FILE", "New secret is the key file FILE (with -addkey, -passwd)", "newkeyfile")
	s(&a.newfido2, "DEVICE", "New secret is a FIDO2 token (with -addkey)", "newfido2")
	s(&a.label, "TEXT", "Label of the new key slot (with -init, -addkey, -passwd)", "label")
	b(&a.argon2id, "The new key slot uses Argon2id instead of scrypt (with -init, -addkey, -passwd)", "argon2id")
	a.argon2idTime, a.argon2idMemory = configfile.Argon2idDefaultTime, configfile.Argon2idDefaultMemory/1024
	fs.Add(&a.argon2idTime, "int", fmt.Sprintf("Argon2id passes (%d..%d)", configfile.Argon2idMinTime, configfile.Argon2idMaxTime), "argon2id-time")
	fs.Add(&a.argon2idMemory, "MiB", fmt.Sprintf("Argon2id memory in MiB (%d..%d)", configfile.Argon2idMinMemory/1024, configfile.Argon2idMaxMemory/1024), "argon2id-memory")
	return fs
}

// parseArgs turns argv (including the program name) into an argContainer.
// It only parses; validate checks the combinations.
func parseArgs(argv []string) (*argContainer, error) {
	a := &argContainer{set: map[string]bool{}, origArgs: argv}
	res, err := newFlagSet(a).Parse(argv)
	if err != nil {
		return nil, exitcodes.Errorf(exitcodes.Usage, "Invalid command line: %s: %v. Try 'gocryptfs -help'.", cliflags.Quote(argv), err)
	}
	a.positional, a.set = res.Positional, res.Given
	return a, nil
}

// isSet reports whether the flag with this canonical name was given.
func (a *argContainer) isSet(name string) bool { return a.set[name] }

// action returns the name of the requested action flag, or "" for mount.
func (a *argContainer) action() string {
	switch {
	case a.init:
		return "init"
	case a.passwd:
		return "passwd"
	case a.info:
		return "info"
	case a.fsck:
		return "fsck"
	case a.addkey:
		return "addkey"
	case a.removekey:
		return "removekey"
	}
	return ""
}

// validate checks the rules of docs/cli.md sections 1 and 3 that do not need the
// filesystem, normalizes the option pairs (-ro wins over -rw, ...) and
// fills the derived fields. Warnings go to log.
func (a *argContainer) validate(log *slog.Logger) error {
	for _, step := range []func() error{a.validateArgs, a.validateCombinations, a.validateValues} {
		if err := step(); err != nil {
			return err
		}
	}
	return a.normalize(log)
}

// usage is a command line error (exit code 1).
func usage(format string, args ...any) error {
	return exitcodes.Errorf(exitcodes.Usage, format, args...)
}

// validateArgs checks the action flags and the positional arguments and
// makes CIPHERDIR and MOUNTPOINT absolute.
func (a *argContainer) validateArgs() error {
	n := 0
	for _, x := range []bool{a.init, a.passwd, a.info, a.fsck, a.addkey, a.removekey} {
		if x {
			n++
		}
	}
	if n > 1 {
		return usage("At most one of -init, -passwd, -info, -fsck, -addkey, -removekey is allowed")
	}
	if a.fsck && a.reverse {
		return usage("-fsck is not supported in reverse mode")
	}
	if (a.repair || a.json) && !a.fsck {
		return usage("-repair and -json only work with -fsck")
	}
	if len(a.positional) == 0 && a.info && a.ctlsock != "" {
		return nil // -info -ctlsock PATH: only the running mount
	}
	return a.validatePositional()
}

// validatePositional checks the number of positional arguments for the
// action and makes CIPHERDIR and MOUNTPOINT absolute.
func (a *argContainer) validatePositional() error {
	if len(a.positional) == 0 {
		return usage("CIPHERDIR argument is missing")
	}
	if act := a.action(); act != "" {
		if len(a.positional) != 1 {
			return usage("Usage: gocryptfs -%s [OPTIONS] CIPHERDIR\n-%s takes exactly one argument, you passed %d: %s",
				act, act, len(a.positional), cliflags.Quote(a.positional))
		}
	} else if len(a.positional) != 2 {
		return usage("Wrong number of arguments (have %d, want 2). You passed: %s\n%s",
			len(a.positional), cliflags.Quote(a.positional), usageLine)
	}
	var err error
	if a.cipherdir, err = filepath.Abs(a.positional[0]); err != nil {
		return usage("invalid CIPHERDIR: %v", err)
	}
	if len(a.positional) == 2 {
		if a.mountpoint, err = filepath.Abs(a.positional[1]); err != nil {
			return usage("invalid MOUNTPOINT: %v", err)
		}
	}
	return nil
}

// validateCombinations refuses the forbidden flag combinations (docs/cli.md 3.4).
func (a *argContainer) validateCombinations() error {
	switch {
	case len(a.extpass) > 0 && len(a.passfile) > 0:
		return usage("The options -extpass and -passfile cannot be used at the same time")
	case len(a.passfile) > 0 && a.masterkey != "":
		return usage("The options -passfile and -masterkey cannot be used at the same time")
	case len(a.extpass) > 0 && a.masterkey != "" && !a.init:
		return usage("The options -extpass and -masterkey cannot be used at the same time")
	case len(a.extpass) > 0 && a.fido2 != "":
		return usage("The options -extpass and -fido2 cannot be used at the same time")
	}
	if err := a.validateKeySlotArgs(); err != nil {
		return usage("%v", err)
	}
	return nil
}

// validateValues checks flag values and derives the fields they select.
func (a *argContainer) validateValues() error {
	if a.longnamemax > 0 && a.longnamemax < configfile.MinLongNameMax {
		return usage("-longnamemax: value %d is outside allowed range %d ... %d",
			a.longnamemax, configfile.MinLongNameMax, configfile.MaxLongNameMax)
	}
	if a.idle < 0 {
		return usage("-idle: negative durations are not allowed: %v", a.idle)
	}
	for _, g := range a.badname {
		if _, err := filepath.Match(g, ""); err != nil {
			return usage("-badname: invalid glob pattern %q: %v", g, err)
		}
	}
	if err := a.validateBackends(); err != nil {
		return err
	}
	if a.forceOwnerStr != "" {
		o, err := parseOwner(a.forceOwnerStr)
		if err != nil {
			return usage("-force_owner: %v", err)
		}
		a.forceOwner = o
		a.allowOther = true
	}
	return nil
}

// validateBackends parses -openssl and -uring into the backend and the
// FUSE transport they select.
func (a *argContainer) validateBackends() error {
	switch a.openssl {
	case "auto":
		a.backend = cryptocore.BackendAuto
	case "true":
		if !cryptocore.BackendOpenSSL.Available() {
			return exitcodes.Errorf(exitcodes.OpenSSL, "-openssl=true: this binary was compiled without OpenSSL support")
		}
		a.backend = cryptocore.BackendOpenSSL
	case "false":
		a.backend = cryptocore.BackendGo
	default:
		return usage("-openssl: invalid value %q, must be one of auto, true, false", a.openssl)
	}
	// Whether io_uring is there is only known at mount time: -uring=true
	// fails then (fuseserve.Mount), with the reason.
	t, err := fuseserve.ParseTransport(a.uring)
	if err != nil {
		return usage("-uring: %v", err)
	}
	a.transport = t
	return nil
}

// normalize resolves the option pairs (the restrictive one wins), cleans
// -fsname and makes the file arguments absolute.
func (a *argContainer) normalize(log *slog.Logger) error {
	if strings.Contains(a.fsname, ",") {
		clean := strings.ReplaceAll(a.fsname, ",", "_")
		log.Warn(fmt.Sprintf("Commas are not allowed in -fsname, replacing %q with %q", a.fsname, clean))
		a.fsname = clean
	}
	if a.reverse {
		a.aessiv = true
	}
	// The restrictive option of each pair wins.
	if a.ro {
		a.rw = false
	}
	if a.nodev {
		a.dev = false
	}
	if a.nosuid {
		a.suid = false
	}
	if a.noexec {
		a.exec = false
	}
	var err error
	if a.config != "" {
		if a.config, err = filepath.Abs(a.config); err != nil {
			return exitcodes.Errorf(exitcodes.Init, "invalid -config: %v", err)
		}
	}
	for i, f := range a.passfile {
		if a.passfile[i], err = filepath.Abs(f); err != nil {
			return usage("invalid -passfile: %v", err)
		}
	}
	// The daemonized mount may run elsewhere: key files need absolute paths.
	for _, p := range []*string{&a.keyfile, &a.newkeyfile} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return usage("invalid key file path: %v", err)
			}
		}
	}
	return nil
}

// parseOwner parses "UID:GID" with both parts unsigned 32-bit integers.
func parseOwner(s string) (*fuse.Owner, error) {
	u, g, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("%q is not of the form UID:GID", s)
	}
	uid, err := strconv.ParseUint(u, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("invalid UID %q: %w", u, err)
	}
	gid, err := strconv.ParseUint(g, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("invalid GID %q: %w", g, err)
	}
	return &fuse.Owner{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// configPath returns the config file location: -config, or the default
// name inside CIPHERDIR for the mode.
func (a *argContainer) configPath() string {
	if a.config != "" {
		return a.config
	}
	if a.reverse {
		return filepath.Join(a.cipherdir, configfile.ConfReverseName)
	}
	return filepath.Join(a.cipherdir, configfile.ConfDefaultName)
}

const usageLine = "Usage: gocryptfs [OPTIONS] CIPHERDIR MOUNTPOINT [-o COMMA-SEPARATED-OPTIONS]"

const shortHelp = `Usage: gocryptfs -init|-passwd|-info [OPTIONS] CIPHERDIR
  or   gocryptfs [OPTIONS] CIPHERDIR MOUNTPOINT [-o COMMA-SEPARATED-OPTIONS]

Options:
  -addkey            Add a key slot (password, -newkeyfile FILE, -newfido2 DEV)
  -aessiv            AES-SIV encryption (with -init)
  -allow_other       Allow other users to access the mount
  -config FILE       Use specified config file instead of CIPHERDIR/gocryptfs.conf
  -ctlsock PATH      Create control socket at PATH
  -extpass CMD       Use external program for the password prompt
  -fg, -f            Stay in the foreground
  -fsck              Check CIPHERDIR for consistency
  -force_owner       Force the ownership of all files to UID:GID
  -fusedebug         Debug FUSE calls
  -h, -help          This short help text
  -hh                Long help text with all options
  -idle, -i DURATION Unmount automatically after DURATION of inactivity
  -init              Initialize encrypted directory
  -info              Display information about encrypted directory
  -keyfile FILE      Unlock with a key-file slot
  -masterkey         Mount with explicit master key instead of password
  -nonempty          Allow mounting over non-empty directory
  -nosyslog          Do not redirect log messages to syslog
  -passfile FILE     Read password from FILE
  -passwd            Change password
  -plaintextnames    Do not encrypt file names (with -init)
  -q, -quiet         Silence informational messages
  -removekey         Remove the key slot that the given secret opens
  -reverse           Enable reverse mode
  -ro                Mount read-only
  -speed             Run crypto speed test
  -version           Print version information
  --                 Stop option parsing
`

// printShortHelp writes the -h text.
func printShortHelp(w io.Writer) {
	fmt.Fprint(w, shortHelp)
}

// printLongHelp writes the -hh text: every flag, sorted, with its default.
func printLongHelp(w io.Writer) {
	a := &argContainer{}
	fs := newFlagSet(a)
	defs := fs.Defs()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Names[0] < defs[j].Names[0] })
	fmt.Fprintln(w, "Usage: gocryptfs -init|-passwd|-info [OPTIONS] CIPHERDIR")
	fmt.Fprintln(w, "  or   gocryptfs [OPTIONS] CIPHERDIR MOUNTPOINT [-o COMMA-SEPARATED-OPTIONS]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Options:")
	for _, d := range defs {
		names := make([]string, len(d.Names))
		for i, n := range d.Names {
			names[i] = "-" + n
		}
		head := "  " + strings.Join(names, ", ")
		if d.ArgName != "" {
			head += " " + d.ArgName
		}
		switch d.Kind {
		case cliflags.List:
			fmt.Fprintf(w, "%s\n    \t%s\n", head, d.Usage)
		case cliflags.String:
			fmt.Fprintf(w, "%s\n    \t%s (default %q)\n", head, d.Usage, d.Default)
		default:
			fmt.Fprintf(w, "%s\n    \t%s (default %s)\n", head, d.Usage, d.Default)
		}
	}
	fmt.Fprintln(w, "  -h\n    \tShort help text")
	fmt.Fprintln(w, "  -o OPTIONS\n    \tComma-separated list of the options above without dashes, e.g. -o passfile=FILE,ro")
	fmt.Fprintln(w, "  --\n    \tStop option parsing")
}
