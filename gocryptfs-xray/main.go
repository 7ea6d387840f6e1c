// Command gocryptfs-xray is the companion tool of gocryptfs (docs/cli.md section
// 9). It inspects the block structure of a ciphertext file without any key,
// prints the master key of a config file after unlocking it like gocryptfs
// does, with a password, -keyfile or -fido2 (-dumpmasterkey, package
// unlock), and translates paths through the control socket of a running
// mount (-encrypt-paths, -decrypt-paths).
//
// main is the only function that calls os.Exit; everything else returns an
// exit code so that the tool can be tested in-process.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"gocryptfs/internal/buildinfo"
	"gocryptfs/internal/exitcodes"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// options are the parsed command-line flags.
type options struct {
	dumpMasterKey, encryptPaths, decryptPaths bool
	sep0, aessiv, xchacha, version            bool
	fido2, keyfile                            string
}

// versionLine is the -version output without the newline: the version and
// build date that build.bash stamps into internal/buildinfo, shared with
// the gocryptfs binary.
func versionLine() string {
	return fmt.Sprintf("gocryptfs-xray %s; %s", buildinfo.Version(), buildinfo.Trailer(""))
}

const usageText = `Usage: gocryptfs-xray [OPTIONS] FILE

Inspect a ciphertext file (default), dump the master key of a config file
(-dumpmasterkey), or translate paths through a control socket
(-encrypt-paths, -decrypt-paths; one path per line on stdin).

Options:
`

const examplesText = `
Examples:
  gocryptfs-xray myfs/mCXnISiv7nEmyc0glGuhTQ
  gocryptfs-xray -dumpmasterkey myfs/gocryptfs.conf
  gocryptfs-xray -dumpmasterkey -keyfile my.key myfs/gocryptfs.conf
  gocryptfs-xray -encrypt-paths myfs.sock < plaintext-paths.txt
  find . -print0 | gocryptfs-xray -decrypt-paths -0 myfs.sock
`

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gocryptfs-xray", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.dumpMasterKey, "dumpmasterkey", false, "Decrypt and dump the master key of the config FILE")
	fs.BoolVar(&o.encryptPaths, "encrypt-paths", false, "Encrypt file paths read from stdin using the control socket FILE")
	fs.BoolVar(&o.decryptPaths, "decrypt-paths", false, "Decrypt file paths read from stdin using the control socket FILE")
	fs.BoolVar(&o.sep0, "0", false, "Use \\0 instead of \\n as the separator of -encrypt-paths/-decrypt-paths input and output")
	fs.BoolVar(&o.aessiv, "aessiv", false, "Assume AES-SIV mode when inspecting a file")
	fs.BoolVar(&o.xchacha, "xchacha", false, "Assume XChaCha20-Poly1305 mode when inspecting a file (-aessiv wins if both are given)")
	fs.StringVar(&o.fido2, "fido2", "", "Protect the master key using the FIDO2 token at this device path (for -dumpmasterkey)")
	fs.StringVar(&o.keyfile, "keyfile", "", "Unlock a key-file slot with this file instead of a password (for -dumpmasterkey)")
	fs.BoolVar(&o.version, "version", false, "Print version information")
	return fs
}

func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, versionLine())
	fmt.Fprint(w, usageText)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, examplesText)
}

// run executes the command line argv and returns the exit code.
func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	fs.Usage = func() {}
	err := fs.Parse(argv[1:])
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout, fs)
		return exitcodes.Success
	}
	if err != nil {
		printUsage(stderr, fs)
		return exitcodes.Usage
	}
	if o.version {
		fmt.Fprintln(stdout, versionLine())
		return exitcodes.Success
	}
	if fs.NArg() != 1 {
		printUsage(stderr, fs)
		return exitcodes.Usage
	}
	n := 0
	for _, op := range []bool{o.dumpMasterKey, o.encryptPaths, o.decryptPaths} {
		if op {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintf(stderr, "fatal: %d operations were requested\n", n)
		return exitcodes.Usage
	}
	if o.keyfile != "" && o.fido2 != "" {
		fmt.Fprintln(stderr, "-keyfile cannot be combined with -fido2")
		return exitcodes.Usage
	}
	if o.keyfile != "" && !o.dumpMasterKey {
		// New in this implementation, so refused where it would be
		// ignored (-fido2 is ignored there, as by the reference).
		fmt.Fprintln(stderr, "-keyfile only works with -dumpmasterkey")
		return exitcodes.Usage
	}
	file := fs.Arg(0)
	switch {
	case o.dumpMasterKey:
		return dumpMasterKey(file, o, stdin, stdout, stderr)
	case o.encryptPaths:
		return transformPaths(file, true, o.sep0, stdin, stdout, stderr)
	case o.decryptPaths:
		return transformPaths(file, false, o.sep0, stdin, stdout, stderr)
	}
	return inspect(file, algoFor(o), stdout, stderr)
}
