package fuseutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/testutil"
)

func TestToErrno(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		want  syscall.Errno
		known bool
	}{
		{"nil", nil, 0, true},
		{"bare", syscall.ENOENT, syscall.ENOENT, true},
		{"wrapped", fmt.Errorf("ctx: %w", syscall.EACCES), syscall.EACCES, true},
		{"path error", &os.PathError{Op: "open", Path: "x", Err: syscall.ELOOP}, syscall.ELOOP, true},
		{"unknown", errors.New("boom"), syscall.EIO, false},
	}
	for _, c := range cases {
		got, known := ToErrno(c.err)
		if got != c.want || known != c.known {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", c.name, got, known, c.want, c.known)
		}
	}
}

func panicky() (errno syscall.Errno) {
	defer Recover(nil, "test", &errno)
	panic("injected failure")
}

func TestRecover(t *testing.T) {
	if e := panicky(); e != syscall.EIO {
		t.Fatalf("got %v, want EIO", e)
	}
}

func TestAttrFromStat(t *testing.T) {
	var st unix.Stat_t
	if err := unix.Lstat(t.TempDir(), &st); err != nil {
		t.Fatal(err)
	}
	var a fuse.Attr
	AttrFromStat(&st, &a)
	if a.Ino != st.Ino || a.Mode != uint32(st.Mode) || a.Mtime != uint64(st.Mtim.Sec) || a.Nlink != uint32(st.Nlink) {
		t.Errorf("attr %+v does not match stat %+v", a, st)
	}
	ApplyOwner(&a, &fuse.Owner{Uid: 12, Gid: 34})
	if a.Uid != 12 || a.Gid != 34 {
		t.Errorf("owner not applied: %+v", a)
	}
}

// TestReadResults: a result serves its bytes until Done, then is reused,
// and a read in steady state allocates nothing.
func TestReadResults(t *testing.T) {
	var p ReadResults
	buf := []byte("hello")
	r := p.Get(buf)
	if b, st := r.Bytes(nil); !st.Ok() || string(b) != "hello" || r.Size() != 5 {
		t.Fatalf("Bytes %q %v, Size %d", b, st, r.Size())
	}
	r.Done()
	r2 := p.Get(buf[:2])
	if b, _ := r2.Bytes(nil); string(b) != "he" || r2.Size() != 2 {
		t.Fatalf("reused result: %q", b)
	}
	r2.Done()
	if n := testing.AllocsPerRun(100, func() { p.Get(buf).Done() }); n != 0 && !testutil.RaceEnabled {
		t.Errorf("%.1f allocations per result", n)
	}
}

func TestXattrResult(t *testing.T) {
	cases := []struct {
		name      string
		dest, val []byte
		wantN     uint32
		wantErrno syscall.Errno
	}{
		{"fits", make([]byte, 8), []byte("abc"), 3, 0},
		{"exact", make([]byte, 3), []byte("abc"), 3, 0},
		{"too small", make([]byte, 2), []byte("abc"), 3, syscall.ERANGE},
		{"size query", nil, []byte("abc"), 3, syscall.ERANGE},
		{"empty value", nil, nil, 0, 0},
	}
	for _, c := range cases {
		n, errno := XattrResult(c.dest, c.val)
		if n != c.wantN || errno != c.wantErrno {
			t.Errorf("%s: got (%d, %v), want (%d, %v)", c.name, n, errno, c.wantN, c.wantErrno)
		}
		if errno == 0 && string(c.dest[:n]) != string(c.val) {
			t.Errorf("%s: copied %q", c.name, c.dest[:n])
		}
	}
}
