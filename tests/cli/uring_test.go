//go:build linux

package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/testutil"
)

// FUSE opcodes that must not come through /dev/fuse while io_uring is on.
const (
	opLookup = 1
	opRead   = 15
	opWrite  = 16
)

// setURingParam is testutil.SetURingParam.
func setURingParam(t *testing.T, v string) {
	t.Helper()
	testutil.SetURingParam(t, v)
}

// mountRun mounts cipherdir on a new directory with args (daemon mode),
// registers the unmount and returns the mount point and the run's result,
// whatever its exit code.
func mountRun(t *testing.T, cipherdir string, args ...string) (string, testutil.Result) {
	t.Helper()
	mnt := newDir(t)
	r := run(t, append(args, cipherdir, mnt)...)
	t.Cleanup(func() { testutil.UnmountDir(t, mnt) })
	return mnt, r
}

// readyLine is the start-up line for transport and why, followed by the
// line scripts wait for.
func readyLine(transport, why string) string {
	return "FUSE transport: " + transport + " (" + why + ")\nFilesystem mounted and ready.\n"
}

// TestURingOff: with the kernel parameter N, -uring=true fails with exit
// 19 and the reason on stderr, mounting nothing; -uring=auto mounts over
// /dev/fuse and says why in the start-up line and in -d's debug record.
func TestURingOff(t *testing.T) {
	setURingParam(t, "N")
	dir := initFS(t)
	why := "io_uring off: " + testutil.URingParam + " is N"

	mnt, r := mountRun(t, dir, "-uring=true", "-extpass", "echo test")
	testutil.Expect(t, r, 19)
	if want := "-uring=true: " + why; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr does not give the reason %q: %v", want, r)
	}
	if testutil.IsMounted(mnt) {
		t.Error("-uring=true mounted without io_uring")
	}

	_, r = mountRun(t, dir, "-d", "-nosyslog", "-extpass", "echo test")
	testutil.Expect(t, r, 0, readyLine("/dev/fuse", why))
	if !regexp.MustCompile(`FUSE transport .*transport=/dev/fuse .*why="` + regexp.QuoteMeta(why) + `"`).MatchString(r.Stdout + r.Stderr) {
		t.Errorf("-d has no debug record of the transport: %v", r)
	}

	// -q silences the start-up line like the other informational ones.
	_, r = mountRun(t, dir, "-q", "-extpass", "echo test")
	testutil.Expect(t, r, 0)
	if r.Stdout != "" {
		t.Errorf("-q mount printed %q", r.Stdout)
	}
}

// TestURingOn: with the kernel parameter Y, the default mount uses
// io_uring and says so; the control socket's Info request (and -info
// -ctlsock) reports it, and the file I/O of the test is served from the
// rings: the ring request count grows, and no LOOKUP, READ or WRITE comes
// through /dev/fuse meanwhile. -uring=false still mounts over /dev/fuse,
// and a reverse mount uses io_uring too.
func TestURingOn(t *testing.T) {
	setURingParam(t, "Y")
	dir := initFS(t)
	why := "io_uring on: " + testutil.URingParam + " is Y"
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	mnt, r := mountRun(t, dir, "-ctlsock", sock, "-extpass", "echo test")
	testutil.Expect(t, r, 0, readyLine("io_uring", why))

	before := mountInfo(t, sock)
	if before.Transport != "io_uring" || before.TransportReason != why {
		t.Fatalf("Info: transport %q (%q)", before.Transport, before.TransportReason)
	}
	if before.RingQueues < 1 || before.RingEntries < before.RingQueues || before.PayloadSize != 1<<20 {
		t.Errorf("Info: %d queues, %d entries, payload %d", before.RingQueues, before.RingEntries, before.PayloadSize)
	}
	fileIO(t, filepath.Join(mnt, "file"))
	after := mountInfo(t, sock)
	if after.RingRequests <= before.RingRequests {
		t.Errorf("ring requests %d before the file I/O, %d after", before.RingRequests, after.RingRequests)
	}
	for _, op := range []uint32{opLookup, opRead, opWrite} {
		if after.DevByOpcode[op] != before.DevByOpcode[op] {
			t.Errorf("opcode %d came through /dev/fuse during the file I/O: %d before, %d after", op, before.DevByOpcode[op], after.DevByOpcode[op])
		}
	}

	// The same through the command line.
	r = run(t, "-info", "-ctlsock", sock, dir)
	testutil.Expect(t, r, 0, "contentEncryption:", "\nTransport:         io_uring ("+why+")\n")
	m := regexp.MustCompile(`\nRingRequests: +(\d+)\n`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("-info -ctlsock: no RingRequests line: %v", r)
	}
	if n, _ := strconv.ParseUint(m[1], 10, 64); n < after.RingRequests {
		t.Errorf("-info -ctlsock: RingRequests %d, the socket said %d before", n, after.RingRequests)
	}
	r = run(t, "-info", "-ctlsock", sock)
	testutil.Expect(t, r, 0, "Transport:         io_uring")
	if strings.Contains(r.Stdout, "Creator:") {
		t.Errorf("-info -ctlsock without CIPHERDIR printed the config: %v", r)
	}

	_, r = mountRun(t, dir, "-uring=false", "-extpass", "echo test")
	testutil.Expect(t, r, 0, readyLine("/dev/fuse", "io_uring off: -uring=false"))

	plain := newDir(t)
	if err := os.WriteFile(filepath.Join(plain, "hello"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Expect(t, run(t, "-init", "-reverse", "-q", "-scryptn", "10", "-extpass", "echo test", plain), 0)
	rmnt, r := mountRun(t, plain, "-reverse", "-uring=true", "-extpass", "echo test")
	testutil.Expect(t, r, 0, readyLine("io_uring", why))
	ents, err := os.ReadDir(rmnt)
	if err != nil || len(ents) != 3 { // gocryptfs.conf, gocryptfs.diriv, the file
		t.Fatalf("reverse mount lists %v, %v", ents, err)
	}
	for _, e := range ents {
		if _, err := os.ReadFile(filepath.Join(rmnt, e.Name())); err != nil {
			t.Error(err)
		}
	}
}

// mountInfo asks the mount behind the control socket sock for its Info.
func mountInfo(t *testing.T, sock string) ctlsock.MountInfo {
	t.Helper()
	c, err := ctlsock.Dial(sock, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Query(ctlsock.Request{Info: true})
	if err != nil || resp.Info == nil {
		t.Fatalf("Info request: %+v, %v", resp, err)
	}
	return *resp.Info
}

// fileIO writes p, syncs it, drops its pages from the page cache and
// reads it back, so that WRITE and READ requests reach the daemon.
func fileIO(t *testing.T, p string) {
	t.Helper()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not what was written", len(got))
	}
}

// TestInfoCtlsockErrors: -info -ctlsock on a socket nobody listens on is
// exit 20 with the reason; -info needs CIPHERDIR or -ctlsock.
func TestInfoCtlsockErrors(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	testutil.Expect(t, run(t, "-info", "-ctlsock", sock), 20, "Cannot query the mount's control socket", sock)
	testutil.Expect(t, run(t, "-info"), 1, "CIPHERDIR argument is missing")
}
