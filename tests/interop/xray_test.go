package interop_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gocryptfs/internal/testutil"
)

// TestXray runs both gocryptfs-xray binaries on every content file of
// directories made by each implementation with each content cipher, and
// -dumpmasterkey on their configs: the outputs and exit codes must be
// identical.
func TestXray(t *testing.T) {
	is := setup(t)
	for _, c := range []struct {
		mode mode
		xray []string // the flag that tells xray the cipher
	}{{forwardModes[0], nil}, {forwardModes[1], []string{"-aessiv"}}, {forwardModes[2], []string{"-xchacha"}}} {
		for _, creator := range []impl{is.ours, is.ref} {
			t.Run(c.mode.name+"/by-"+creator.name, func(t *testing.T) {
				cipher := testutil.NewDir(t, "cipher")
				creator.initDir(t, cipher, c.mode.flags...)
				mnt := creator.mount(t, cipher, creator.passArgs(t)...)
				o := ops{t, mnt}
				for _, n := range []int{0, 1, 4095, 4096, 4097, 70000} {
					o.write(filepath.Join("f"+strings.Repeat("0", n%7)+string(rune('a'+n%26))), data(t.Name(), n), 0o644)
				}
				o.pwrite("sparse", 3*4096+5, []byte("x"))
				testutil.UnmountDir(t, mnt)

				files := 0
				err := filepath.WalkDir(cipher, func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "gocryptfs.") {
						return err
					}
					files++
					sameOutput(t, is, nil, "", append(append([]string(nil), c.xray...), p)...)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if files != 7 {
					t.Errorf("inspected %d files, want 7", files)
				}
				conf := filepath.Join(cipher, "gocryptfs.conf")
				sameOutput(t, is, nil, testutil.Password+"\n", "-dumpmasterkey", conf)
				// 2.3 first prints the decryption error.
				r := sameOutput(t, is, lastLine, "wrong\n", "-dumpmasterkey", conf)
				testutil.Expect(t, r, 8, "Password incorrect.")
			})
		}
	}
}

// sameOutput runs both gocryptfs-xray binaries with stdin and args and
// fails the test unless exit code, stdout and stderr (after normalize, if
// set) are the same. It returns the reference's result, normalized.
func sameOutput(t *testing.T, is impls, normalize func(string) string, stdin string, args ...string) testutil.Result {
	t.Helper()
	ref := testutil.Run(t, testutil.RunOptions{Stdin: stdin}, is.ref.xray, args...)
	ours := testutil.Run(t, testutil.RunOptions{Stdin: stdin}, is.ours.xray, args...)
	if normalize != nil {
		ref.Stderr, ours.Stderr = normalize(ref.Stderr), normalize(ours.Stderr)
	}
	if ref != ours {
		t.Errorf("gocryptfs-xray %q:\nref: %v\nours: %v", args, ref, ours)
	}
	return ref
}

// TestCtlsock serves the control socket of one directory with each
// implementation in turn and queries it with both gocryptfs-xray
// binaries (-encrypt-paths, -decrypt-paths): all four combinations must
// give the same answers, long names and errors included. Only the texts
// of errors with errno -1 may differ: 2.3 says "Empty input" and passes
// on base64 decoding errors, where ours, as newer reference versions,
// says "empty input" and "bad message".
func TestCtlsock(t *testing.T) {
	is := setup(t)
	cipher := testutil.NewDir(t, "cipher")
	is.ref.initDir(t, cipher)
	mnt := is.ref.mount(t, cipher, is.ref.passArgs(t)...)
	o := ops{t, mnt}
	o.mkdir("dir", 0o755)
	o.mkdir("dir/sub", 0o755)
	o.write("dir/sub/f", nil, 0o644)
	o.write(name255, nil, 0o644)
	o.write("dir/"+name176, nil, 0o644)
	o.write("a", nil, 0o644)
	testutil.UnmountDir(t, mnt)

	plainPaths := strings.Join([]string{"a", "dir", "dir/sub/f", name255, "dir/" + name176, "missing/x", "", "a"}, "\n") + "\n"
	var encAnswer, decAnswer *testutil.Result
	for _, server := range []impl{is.ref, is.ours} {
		sock := filepath.Join(t.TempDir(), "ctl.sock")
		mnt := server.mount(t, cipher, append(server.passArgs(t), "-ctlsock", sock)...)
		enc := sameOutput(t, is, errnoOnly, plainPaths, "-encrypt-paths", sock)
		var cipherPaths []string
		for l := range strings.SplitSeq(enc.Stdout, "\n") {
			if l != "" {
				cipherPaths = append(cipherPaths, l)
			}
		}
		if len(cipherPaths) != 6 {
			t.Fatalf("%s's control socket encrypted %d paths, want 6: %v", server.name, len(cipherPaths), enc)
		}
		for _, p := range cipherPaths {
			if _, err := os.Lstat(filepath.Join(cipher, p)); err != nil {
				t.Errorf("encrypted path %s not in the cipherdir: %v", short(p), err)
			}
		}
		dec := sameOutput(t, is, errnoOnly, strings.Join(append(cipherPaths, "bogus", "gocryptfs.diriv"), "\n")+"\n", "-decrypt-paths", sock)
		if encAnswer == nil {
			encAnswer, decAnswer = &enc, &dec
		} else if enc != *encAnswer || dec != *decAnswer {
			t.Errorf("the control sockets answer differently:\nref: %v\n%v\nours: %v\n%v", *encAnswer, *decAnswer, enc, dec)
		}
		testutil.UnmountDir(t, mnt)
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// errnoText matches the text after the errno of a gocryptfs-xray
// -encrypt-paths/-decrypt-paths error line.
var errnoText = regexp.MustCompile(`(?m)(errno -?[0-9]+):.*$`)

// errnoOnly cuts the error texts after the errno from xray's error lines.
func errnoOnly(s string) string {
	return errnoText.ReplaceAllString(s, "$1")
}
