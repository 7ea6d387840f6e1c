package ctlsock_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/nametransform"
)

// fakeTranslator records the canonical paths it was given.
type fakeTranslator struct {
	got []string
	err error
}

func (f *fakeTranslator) EncryptPath(p string) (string, error) {
	f.got = append(f.got, "E:"+p)
	return "enc(" + p + ")", f.err
}

func (f *fakeTranslator) DecryptPath(p string) (string, error) {
	f.got = append(f.got, "D:"+p)
	return "dec(" + p + ")", f.err
}

func TestCanonicalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a", "a"},
		{"/a", "a"},
		{"//a//b/", "a/b"},
		{"a/./b", "a/b"},
		{"a/../b", "b"},
		{"/", ""},
		{".", ""},
		{"..", ""},
		{"../a", ""},
		{"a/../..", ""},
		{"/../a", "a"},
	} {
		if got := ctlsock.Canonicalize(c.in); got != c.want {
			t.Errorf("Canonicalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHandle(t *testing.T) {
	for _, c := range []struct {
		name    string
		req     ctlsock.Request
		err     error
		want    ctlsock.Response
		wantArg string
	}{
		{"encrypt", ctlsock.Request{EncryptPath: "a/b"}, nil,
			ctlsock.Response{Result: "enc(a/b)"}, "E:a/b"},
		{"decrypt", ctlsock.Request{DecryptPath: "x"}, nil,
			ctlsock.Response{Result: "dec(x)"}, "D:x"},
		{"ambiguous", ctlsock.Request{EncryptPath: "a", DecryptPath: "b"}, nil,
			ctlsock.Response{ErrNo: -1, ErrText: "Ambiguous"}, ""},
		{"empty", ctlsock.Request{}, nil,
			ctlsock.Response{ErrNo: -1, ErrText: "empty input"}, ""},
		{"root", ctlsock.Request{EncryptPath: "/"}, nil,
			ctlsock.Response{ErrNo: -1, ErrText: "empty input after canonicalization",
				WarnText: "Non-canonical input path '/' has been interpreted as ''."}, ""},
		{"noncanonical", ctlsock.Request{EncryptPath: "/d//f"}, nil,
			ctlsock.Response{Result: "enc(d/f)", WarnText: "Non-canonical input path '/d//f' has been interpreted as 'd/f'."}, "E:d/f"},
		{"errno", ctlsock.Request{DecryptPath: "x"}, fmt.Errorf("ctx: %w", syscall.ENOENT),
			ctlsock.Response{ErrNo: 2, ErrText: "no such file or directory"}, "D:x"},
		{"badname", ctlsock.Request{DecryptPath: "x"}, fmt.Errorf("ctx: %w", nametransform.ErrBadName),
			ctlsock.Response{ErrNo: -1, ErrText: "bad message"}, "D:x"},
		{"other", ctlsock.Request{DecryptPath: "x"}, errors.New("boom"),
			ctlsock.Response{ErrNo: -1, ErrText: "boom"}, "D:x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeTranslator{err: c.err}
			got := ctlsock.Handle(f, c.req)
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if c.wantArg == "" && len(f.got) != 0 || c.wantArg != "" && (len(f.got) != 1 || f.got[0] != c.wantArg) {
				t.Errorf("translator called with %q, want %q", f.got, c.wantArg)
			}
		})
	}
}

func TestResponseFieldOrder(t *testing.T) {
	got := string(ctlsock.Response{Result: "r", ErrNo: 5, ErrText: "e", WarnText: "w"}.Marshal())
	want := `{"Result":"r","ErrNo":5,"ErrText":"e","WarnText":"w"}` + "\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOversizedRequestCloses(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	s, err := ctlsock.Listen(sock, ctlsock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Serve(&fakeTranslator{})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := `{"EncryptPath":"` + strings.Repeat("x", 6000) + `"}`
	if _, err := c.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var all bytes.Buffer
	buf := make([]byte, 100)
	for {
		n, err := c.Read(buf)
		all.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if all.Len() != 0 {
		t.Errorf("got a reply to an oversized request: %q", all.String())
	}
}

func TestListenPathChecks(t *testing.T) {
	dir := t.TempDir()

	// A regular file is never replaced.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := ctlsock.Listen(file, ctlsock.Options{}); !errors.Is(err, ctlsock.ErrSocketInUse) {
		t.Errorf("regular file: err = %v", err)
	}

	// A live socket is refused.
	live := filepath.Join(dir, "live")
	s1, err := ctlsock.Listen(live, ctlsock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ctlsock.Listen(live, ctlsock.Options{}); !errors.Is(err, ctlsock.ErrSocketInUse) {
		t.Errorf("live socket: err = %v", err)
	}
	s1.Close()
	if _, err := os.Lstat(live); !os.IsNotExist(err) {
		t.Errorf("socket file not removed by Close: %v", err)
	}

	// A stale socket (bound, nobody listening) is replaced.
	stale := filepath.Join(dir, "stale")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(stale); err != nil {
		t.Fatalf("stale socket vanished: %v", err)
	}
	s2, err := ctlsock.Listen(stale, ctlsock.Options{})
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	s2.Close()
	s2.Close() // idempotent

	var nilServer *ctlsock.Server
	nilServer.Serve(&fakeTranslator{})
	if err := nilServer.Close(); err != nil {
		t.Error(err)
	}
}

// TestInfoRequest: an Info request is answered with "not mounted yet"
// until SetInfo, then with the MountInfo under "Info" after the four
// usual fields; combined with a path it is ambiguous; and path requests
// keep their four-field answers.
func TestInfoRequest(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	s, err := ctlsock.Listen(sock, ctlsock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Serve(&fakeTranslator{})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exchange := func(req, want string) {
		t.Helper()
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 1000)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%s: %v", req, err)
		}
		if got := string(buf[:n]); got != want+"\n" {
			t.Errorf("%s:\n got  %s\n want %s", req, got, want)
		}
	}
	exchange(`{"Info":true}`, `{"Result":"","ErrNo":-1,"ErrText":"not mounted yet","WarnText":""}`)
	var calls atomic.Int32 // called on the connection's goroutine
	s.SetInfo(func() ctlsock.MountInfo {
		calls.Add(1)
		return ctlsock.MountInfo{Transport: "io_uring", TransportReason: "io_uring on: x is Y",
			RingRequests: 7, DevRequests: 3, DevByOpcode: map[uint32]uint64{2: 2, 26: 1},
			RingQueues: 2, RingEntries: 4, PayloadSize: 1 << 20}
	})
	exchange(`{"info":true}`, `{"Result":"","ErrNo":0,"ErrText":"","WarnText":"","Info":{"Transport":"io_uring","TransportReason":"io_uring on: x is Y","RingRequests":7,"DevRequests":3,"DevByOpcode":{"2":2,"26":1},"RingQueues":2,"RingEntries":4,"PayloadSize":1048576}}`)
	exchange(`{"Info":true,"EncryptPath":"a"}`, `{"Result":"","ErrNo":-1,"ErrText":"Ambiguous","WarnText":""}`)
	exchange(`{"Info":false}`, `{"Result":"","ErrNo":-1,"ErrText":"empty input","WarnText":""}`)
	exchange(`{"EncryptPath":"a"}`, `{"Result":"enc(a)","ErrNo":0,"ErrText":"","WarnText":""}`)
	if n := calls.Load(); n != 1 {
		t.Errorf("info function called %d times, want 1", n)
	}

	// The client library decodes the answer.
	cl, err := ctlsock.Dial(sock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r, err := cl.Query(ctlsock.Request{Info: true})
	if err != nil || r.Info == nil || r.Info.RingRequests != 7 || r.Info.DevByOpcode[26] != 1 {
		t.Errorf("Query = %+v (%+v), %v", r, r.Info, err)
	}

	var nilServer *ctlsock.Server
	nilServer.SetInfo(nil) // does nothing
}
