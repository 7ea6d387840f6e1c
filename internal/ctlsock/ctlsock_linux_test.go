package ctlsock_test

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/fusefrontend"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// tv4Root builds the directory structure of the TV-4 filesystem of
// docs/format.md (root and dir1 IVs) and returns a forward RootNode on it.
func tv4Root(t *testing.T) *fusefrontend.RootNode {
	t.Helper()
	core := coretest.New(t, coretest.Options{HKDF: true, Names: nametransform.Options{Raw64: true}})
	rn, err := fusefrontend.NewRootNode(fusefrontend.Args{CipherDir: testutil.TV4CipherDir(t)}, core.NT, core.CE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	return rn
}

// TestServerTV4 replays the exchanges observed with the reference (docs/cli.md
// section 8) byte for byte over a real socket.
func TestServerTV4(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	s, err := ctlsock.Listen(sock, ctlsock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Connect before Serve: the request must wait, not fail.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s.Serve(tv4Root(t))
	defer s.Close()

	buf := make([]byte, 1000)
	for _, x := range []struct{ req, resp string }{
		{`{"EncryptPath":"a"}`, `{"Result":"RstaWk5xuBGCq94EGMhOoQ","ErrNo":0,"ErrText":"","WarnText":""}`},
		{`{"DecryptPath":"RstaWk5xuBGCq94EGMhOoQ"}`, `{"Result":"a","ErrNo":0,"ErrText":"","WarnText":""}`},
		{`{"EncryptPath":"/dir1//file.txt"}`, `{"Result":"AcJVqps12xZ4feukhiQfOw/Ot_tHIia9GkSdsBCTPVTug","ErrNo":0,"ErrText":"","WarnText":"Non-canonical input path '/dir1//file.txt' has been interpreted as 'dir1/file.txt'."}`},
		{`{"EncryptPath":"a","DecryptPath":"b"}`, `{"Result":"","ErrNo":-1,"ErrText":"Ambiguous","WarnText":""}`},
		{`{}`, `{"Result":"","ErrNo":-1,"ErrText":"empty input","WarnText":""}`},
		{`{"EncryptPath":"/"}`, `{"Result":"","ErrNo":-1,"ErrText":"empty input after canonicalization","WarnText":"Non-canonical input path '/' has been interpreted as ''."}`},
		{`{"DecryptPath":"nonexist/abc"}`, `{"Result":"","ErrNo":-1,"ErrText":"bad message","WarnText":""}`},
		{`{"DecryptPath":"AcJVqps12xZ4feukhiQfOw/gocryptfs.longname.abc"}`, `{"Result":"","ErrNo":2,"ErrText":"no such file or directory","WarnText":""}`},
		{`not json`, `{"Result":"","ErrNo":-1,"ErrText":"JSON Unmarshal error: invalid character 'o' in literal null (expecting 'u')","WarnText":""}`},
		{`{"encryptpath":"hello.txt"}`, `{"Result":"90mGAqBQtvpoJD1knzTcOQ","ErrNo":0,"ErrText":"","WarnText":""}`},
	} {
		if _, err := c.Write([]byte(x.req)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%s: %v", x.req, err)
		}
		if got := string(buf[:n]); got != x.resp+"\n" {
			t.Errorf("%s:\n got  %s\n want %s", x.req, got, x.resp)
		}
	}

	// The client library gives the same answers.
	cl, err := ctlsock.Dial(sock, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r, err := cl.Query(ctlsock.Request{EncryptPath: "hello.txt"})
	if err != nil || r.Result != "90mGAqBQtvpoJD1knzTcOQ" {
		t.Errorf("Query = %+v, %v", r, err)
	}
	_, err = cl.Query(ctlsock.Request{DecryptPath: "AcJVqps12xZ4feukhiQfOw/gocryptfs.longname.abc"})
	var qe *ctlsock.QueryError
	if !errors.As(err, &qe) || qe.ErrNo != 2 || err.Error() != "errno 2: no such file or directory" {
		t.Errorf("Query error = %v", err)
	}
}
