package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/fusefrontend"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// tv4Socket serves the TV-4 directory structure (root and dir1 IVs) on a
// control socket, like a mount of the fwd filesystem would.
func tv4Socket(t *testing.T) string {
	t.Helper()
	core := coretest.New(t, coretest.Options{HKDF: true, Names: nametransform.Options{Raw64: true}})
	rn, err := fusefrontend.NewRootNode(fusefrontend.Args{CipherDir: testutil.TV4CipherDir(t)}, core.NT, core.CE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	sock := filepath.Join(t.TempDir(), "fs.sock")
	s, err := ctlsock.Listen(sock, ctlsock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(rn)
	t.Cleanup(func() { s.Close() })
	return sock
}

func TestPaths(t *testing.T) {
	sock := tv4Socket(t)
	for _, c := range []struct {
		name, stdin    string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"spec example", "a\nhello.txt\n", []string{"-encrypt-paths"}, 0,
			"RstaWk5xuBGCq94EGMhOoQ\n90mGAqBQtvpoJD1knzTcOQ\n", ""},
		{"last item without newline", "a\nhello.txt", []string{"-encrypt-paths"}, 0,
			"RstaWk5xuBGCq94EGMhOoQ\n90mGAqBQtvpoJD1knzTcOQ\n", ""},
		{"no input", "", []string{"-encrypt-paths"}, 0, "", ""},
		{"decrypt", "RstaWk5xuBGCq94EGMhOoQ\nAcJVqps12xZ4feukhiQfOw/Ot_tHIia9GkSdsBCTPVTug\n", []string{"-decrypt-paths"}, 0,
			"a\ndir1/file.txt\n", ""},
		{"-0", "a\x00dir1/file.txt\x00dir1/x", []string{"-encrypt-paths", "-0"}, 0,
			"RstaWk5xuBGCq94EGMhOoQ\x00AcJVqps12xZ4feukhiQfOw/Ot_tHIia9GkSdsBCTPVTug\x00AcJVqps12xZ4feukhiQfOw/lhjquxQCkzoTjInusT0-iw\x00", ""},
		{"warning", "/dir1//file.txt\n", []string{"-encrypt-paths"}, 0,
			"AcJVqps12xZ4feukhiQfOw/Ot_tHIia9GkSdsBCTPVTug\n",
			"warning at input line 1 \"/dir1//file.txt\": Non-canonical input path '/dir1//file.txt' has been interpreted as 'dir1/file.txt'.\n"},
		{"errors", "a\nnonexist/abc\n\nhello.txt\nAcJVqps12xZ4feukhiQfOw/gocryptfs.longname.abc\n", []string{"-decrypt-paths"}, 1,
			"",
			"error at input line 1 \"a\": errno -1: bad message\n" +
				"error at input line 2 \"nonexist/abc\": errno -1: bad message\n" +
				"error at input line 3 \"\": errno -1: empty input\n" +
				"error at input line 4 \"hello.txt\": errno -1: bad message\n" +
				"error at input line 5 \"AcJVqps12xZ4feukhiQfOw/gocryptfs.longname.abc\": errno 2: no such file or directory\n"},
		{"mixed", "a\n/\nhello.txt\n", []string{"-encrypt-paths"}, 1,
			"RstaWk5xuBGCq94EGMhOoQ\n90mGAqBQtvpoJD1knzTcOQ\n",
			"error at input line 2 \"/\": errno -1: empty input after canonicalization\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := xray(t, c.stdin, append(c.args, sock)...)
			if code != c.code || out != c.stdout || errOut != c.stderr {
				t.Errorf("exit %d (want %d)\nstdout: %q\nwant    %q\nstderr: %q\nwant    %q", code, c.code, out, c.stdout, errOut, c.stderr)
			}
		})
	}
	if _, errOut, code := xray(t, "a\n", "-encrypt-paths", filepath.Join(t.TempDir(), "nosock")); code != 1 || !strings.Contains(errOut, "connect") {
		t.Errorf("missing socket: exit %d, %q", code, errOut)
	}
}
