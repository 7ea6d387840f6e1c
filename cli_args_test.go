//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/tlog"
)

// parse is a helper: argv split on spaces, program name prepended.
func parse(t *testing.T, args string) (*argContainer, error) {
	t.Helper()
	return parseArgs(append([]string{"gocryptfs"}, strings.Fields(args)...))
}

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name  string
		args  string
		check func(a *argContainer) bool
	}{
		{"single and double dash", "-fg --nosyslog c m", func(a *argContainer) bool { return a.fg && a.nosyslog }},
		{"alias -f", "-f c m", func(a *argContainer) bool { return a.fg }},
		{"alias -q -d", "-q -d c m", func(a *argContainer) bool { return a.quiet && a.debug }},
		{"alias -i", "-i 5s c m", func(a *argContainer) bool { return a.idle == 5*time.Second }},
		{"long -idle attached", "-idle=2h45m c m", func(a *argContainer) bool { return a.idle == 2*time.Hour+45*time.Minute }},
		{"interleaved", "c -fg m -q", func(a *argContainer) bool {
			return a.fg && a.quiet && strings.Join(a.positional, ",") == "c,m"
		}},
		{"separate value", "-passfile pw c m", func(a *argContainer) bool { return a.passfile[0] == "pw" }},
		{"attached value", "-passfile=pw c m", func(a *argContainer) bool { return a.passfile[0] == "pw" }},
		{"attached empty string", "-fsname= c m", func(a *argContainer) bool { return a.fsname == "" && a.isSet("fsname") }},
		{"bool attached false", "-raw64=false c m", func(a *argContainer) bool { return !a.raw64 }},
		{"bool separate value is positional", "-raw64 false c m", func(a *argContainer) bool {
			return a.raw64 && strings.Join(a.positional, ",") == "false,c,m"
		}},
		{"dash duplication quirk", "-extpass -X c m", func(a *argContainer) bool { return a.extpass[0] == "--X" }},
		{"attached avoids quirk", "-extpass=-X c m", func(a *argContainer) bool { return a.extpass[0] == "-X" }},
		{"double dash ends options", "-q -- -c -m", func(a *argContainer) bool {
			return a.quiet && strings.Join(a.positional, ",") == "-c,-m"
		}},
		{"repeatable accumulate", "-extpass a -extpass b -e x -exclude y -ew p -exclude-wildcard q -badname g1 -badname g2 -exclude-from f c m",
			func(a *argContainer) bool {
				return strings.Join(a.extpass, ",") == "a,b" && strings.Join(a.exclude, ",") == "x,y" &&
					strings.Join(a.excludeWildcard, ",") == "p,q" && strings.Join(a.badname, ",") == "g1,g2" &&
					len(a.excludeFrom) == 1
			}},
		{"last wins", "-scryptn 12 -scryptn=14 c m", func(a *argContainer) bool { return a.scryptn == 14 }},
		{"defaults", "c m", func(a *argContainer) bool {
			return a.scryptn == 16 && a.hkdf && a.raw64 && a.longnames && a.openssl == "auto" && a.uring == "auto" && !a.isSet("scryptn")
		}},
		{"-o expands", "c m -o passfile=pw,ro,q", func(a *argContainer) bool { return a.passfile[0] == "pw" && a.ro && a.quiet }},
		{"-o ko", "c m -o ko=noatime", func(a *argContainer) bool { return a.ko == "noatime" }},
		{"obsolete ignored", "-devrandom -forcedecode -nofail c m", func(a *argContainer) bool { return a.devrandom && a.nofail }},
		{"-h", "-h", func(a *argContainer) bool { return a.help }},
		{"-help", "-help", func(a *argContainer) bool { return a.help }},
		{"-hh", "-hh", func(a *argContainer) bool { return a.hh }},
		{"-version", "--version", func(a *argContainer) bool { return a.version }},
		{"fido2-assert-option", "-fido2-assert-option a -fido2-assert-option b c", func(a *argContainer) bool {
			return len(a.fido2AssertOptions) == 2
		}},
		{"int hex", "-notifypid 0x10 c m", func(a *argContainer) bool { return a.notifypid == 16 }},
		{"longnamemax", "-longnamemax 100 c", func(a *argContainer) bool { return a.longnamemax == 100 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := parse(t, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(a) {
				t.Errorf("check failed: %+v", a)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		name, args, msg string
	}{
		{"unknown flag", "-foo c m", `Invalid command line: "gocryptfs" "-foo" "c" "m": unknown flag: --foo. Try 'gocryptfs -help'.`},
		{"unknown in -o", "c m -o noatime", "unknown flag: --noatime"},
		{"missing value", "c m -passfile", "flag needs an argument: --passfile"},
		{"bad bool", "-raw64=maybe c m", `invalid argument "maybe"`},
		{"longnamemax too large", "-longnamemax 256 c", "out of range"},
		{"longnamemax negative", "-longnamemax=-1 c", "invalid argument"},
		{"bad duration", "-idle x c m", "invalid argument"},
		{"bad int", "-scryptn x c", "invalid argument"},
		{"trailing -o", "c m -o", "-o"},
		{"-o o", "c m -o o", "-o"},
		{"triple dash", "---fg c m", "bad flag syntax"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.args)
			if err == nil || exitcodes.From(err) != exitcodes.Usage || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v (code %d), want code 1 and %q", err, exitcodes.From(err), c.msg)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		args string
		code int
		msg  string
	}{
		{"ok mount", "c m", 0, ""},
		{"ok init", "-init c", 0, ""},
		{"missing cipherdir", "-q", exitcodes.Usage, "CIPHERDIR argument is missing"},
		{"mount one arg", "c", exitcodes.Usage, "Wrong number of arguments (have 1, want 2)"},
		{"mount three args", "c m x", exitcodes.Usage, "Wrong number of arguments"},
		{"init two args", "-init c m", exitcodes.Usage, "exactly one argument"},
		{"two actions", "-init -info c", exitcodes.Usage, "At most one"},
		{"extpass+passfile", "-extpass x -passfile y c m", exitcodes.Usage, "-extpass and -passfile"},
		{"passfile+masterkey", "-passfile y -masterkey k c m", exitcodes.Usage, "-passfile and -masterkey"},
		{"extpass+masterkey", "-extpass y -masterkey k c m", exitcodes.Usage, "-extpass and -masterkey"},
		{"extpass+masterkey init ok", "-init -extpass y -masterkey k c", 0, ""},
		{"extpass+fido2", "-extpass y -fido2 /dev/x c m", exitcodes.Usage, "-extpass and -fido2"},
		{"longnamemax 61", "-init -longnamemax 61 c", exitcodes.Usage, "-longnamemax"},
		{"longnamemax 1", "-init -longnamemax 1 c", exitcodes.Usage, "-longnamemax"},
		{"longnamemax 62", "-init -longnamemax 62 c", 0, ""},
		{"longnamemax 0 default", "-init -longnamemax 0 c", 0, ""},
		{"negative idle", "-idle=-5s c m", exitcodes.Usage, "negative"},
		{"bad badname", "-badname [ c m", exitcodes.Usage, "-badname"},
		{"good badname", "-badname *.txt c m", 0, ""},
		{"openssl bad", "-openssl maybe c m", exitcodes.Usage, "-openssl"},
		{"openssl false", "-openssl false c m", 0, ""},
		{"uring bad", "-uring maybe c m", exitcodes.Usage, `-uring: invalid value "maybe", must be one of auto, true, false`},
		{"uring yes", "-uring=yes c m", exitcodes.Usage, "-uring"},
		{"uring false", "-uring false c m", 0, ""},
		{"info ctlsock without cipherdir", "-info -ctlsock s", 0, ""},
		{"info without cipherdir", "-info", exitcodes.Usage, "CIPHERDIR argument is missing"},
		{"ctlsock mount without cipherdir", "-ctlsock s", exitcodes.Usage, "CIPHERDIR argument is missing"},
		{"info ctlsock json", "-info -json -ctlsock s", exitcodes.Usage, "-repair and -json"},
		{"force_owner bad", "-force_owner 1000 c m", exitcodes.Usage, "-force_owner"},
		{"force_owner bad gid", "-force_owner 1:x c m", exitcodes.Usage, "-force_owner"},
		{"fsck reverse", "-fsck -reverse c", exitcodes.Usage, "reverse"},
		{"repair without fsck", "-repair c m", exitcodes.Usage, "-repair and -json"},
		{"json without fsck", "-json -info c", exitcodes.Usage, "-repair and -json"},
		{"fsck repair json", "-fsck -repair -json c", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := parse(t, c.args)
			if err != nil {
				t.Fatal(err)
			}
			err = a.validate(tlog.Discard())
			if c.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if exitcodes.From(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v (code %d), want code %d and %q", err, exitcodes.From(err), c.code, c.msg)
			}
		})
	}
}

// TestURingFlag: -uring takes auto (the default), true and false, in the
// style of -openssl, and selects the FUSE transport.
func TestURingFlag(t *testing.T) {
	for _, c := range []struct {
		args string
		want fuseserve.Transport
	}{
		{"c m", fuseserve.TransportAuto},
		{"-uring auto c m", fuseserve.TransportAuto},
		{"-uring=true c m", fuseserve.TransportURing},
		{"-uring false c m", fuseserve.TransportClassic},
		{"-uring=true -uring=false c m", fuseserve.TransportClassic},
		{"c m -o uring=true", fuseserve.TransportURing},
	} {
		a, err := parse(t, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.validate(tlog.Discard()); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if a.transport != c.want {
			t.Errorf("%q: transport %v, want %v", c.args, a.transport, c.want)
		}
	}
	var b bytes.Buffer
	printLongHelp(&b)
	if want := "  -uring auto|true|false\n    \tUse FUSE over io_uring instead of /dev/fuse (auto: when the kernel offers it) (default \"auto\")\n"; !strings.Contains(b.String(), want) {
		t.Errorf("-hh does not show %q", want)
	}
}

func TestValidateNormalizes(t *testing.T) {
	var warn bytes.Buffer
	log := tlog.New(tlog.Options{Stdout: &warn, Stderr: &warn})
	a, err := parse(t, "-ro -rw -dev -nodev -suid -nosuid -exec -noexec -force_owner 10:20 -fsname a,b -reverse c m")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.validate(log); err != nil {
		t.Fatal(err)
	}
	if !a.ro || a.rw || a.dev || a.suid || a.exec {
		t.Errorf("restrictive option must win: %+v", a)
	}
	if a.forceOwner == nil || a.forceOwner.Uid != 10 || a.forceOwner.Gid != 20 || !a.allowOther {
		t.Errorf("force_owner: %+v allow_other=%v", a.forceOwner, a.allowOther)
	}
	if a.fsname != "a_b" || !strings.Contains(warn.String(), "Commas") {
		t.Errorf("fsname %q, warning %q", a.fsname, warn.String())
	}
	if !a.aessiv {
		t.Error("-reverse must imply -aessiv")
	}
	if !strings.HasSuffix(a.configPath(), "/c/.gocryptfs.reverse.conf") {
		t.Errorf("reverse config path %q", a.configPath())
	}
}

func TestKernelOptions(t *testing.T) {
	cases := []struct {
		args string
		ro   bool
		want string
	}{
		{"c m", false, "nosuid,nodev"},
		{"-rw c m", false, "rw,nosuid,nodev"},
		{"c m", true, "ro,nosuid,nodev"},
		{"-suid -dev -exec c m", false, "suid,dev,exec"},
		{"-noexec -allow_other -context=x_t c m", false, "nosuid,nodev,noexec,default_permissions,context=x_t"},
		{"-ko noatime,noexec c m", false, "nosuid,nodev,noatime,noexec"},
	}
	for _, c := range cases {
		a, err := parse(t, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.validate(tlog.Discard()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(mountopts.KernelOptions(mountParams(a, c.ro)), ","); got != c.want {
			t.Errorf("%q: got %q, want %q", c.args, got, c.want)
		}
	}
}

func TestFormatMasterKey(t *testing.T) {
	k := testutil.MasterKey()
	want := "    00010203-04050607-08090a0b-0c0d0e0f-\n    10111213-14151617-18191a1b-1c1d1e1f\n"
	if got := formatMasterKey(k); got != want {
		t.Errorf("got %q", got)
	}
}

func TestLongHelpListsAllFlags(t *testing.T) {
	var b bytes.Buffer
	printLongHelp(&b)
	fs := newFlagSet(&argContainer{})
	for _, d := range fs.Defs() {
		if !strings.Contains(b.String(), "-"+d.Names[0]) {
			t.Errorf("-hh does not list -%s", d.Names[0])
		}
	}
	if !strings.Contains(b.String(), "(default 16)") {
		t.Error("-hh does not show the -scryptn default")
	}
}
