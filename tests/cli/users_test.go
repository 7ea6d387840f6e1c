package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// userJobEnv turns the test binary into a worker that runs one loop of
// system calls (a userJob, JSON-encoded) as whatever user it was started
// as; see runUserJobs.
const userJobEnv = "GOCRYPTFS_TEST_USER_JOB"

// userJob is the work of one re-executed test binary.
type userJob struct {
	// Kind: "steal" opens Path with Flags Count times and counts the
	// handles it gets to files it does not own; "churn" creates Path
	// (0600, with content) and removes it again until StopFile exists;
	// "multi" and "single" are the loops of issue 19 finding 4 in Dir.
	Kind     string
	Path     string
	Dir      string
	StopFile string
	Flags    int
	Count    int
}

// userResult is what a worker reports on stdout.
type userResult struct {
	// Errors lists every failed call ("iter 3: close bar: EIO").
	Errors []string
	// Foreign counts handles to files owned by someone else, EACCES the
	// opens the permission check refused, Own those that created the
	// file, Tries all opens, Other the other failures by error (steal).
	Foreign, EACCES, Own, Tries int
	Other                       map[string]int
}

// userJobMain runs the job in $GOCRYPTFS_TEST_USER_JOB and reports whether
// this process is such a worker.
func userJobMain() (code int, ok bool) {
	v := os.Getenv(userJobEnv)
	if v == "" {
		return 0, false
	}
	var j userJob
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2, true
	}
	syscall.Umask(0o022)
	var r userResult
	fail := func(i int, what string, err error) {
		r.Errors = append(r.Errors, fmt.Sprintf("uid %d iter %d: %s: %v", os.Getuid(), i, what, err))
	}
	switch j.Kind {
	case "steal":
		stealLoop(j, &r, fail)
	case "churn":
		churnLoop(j, fail)
	case "multi":
		multiLoop(j, fail)
	case "single":
		singleLoop(j, fail)
	default:
		fmt.Fprintln(os.Stderr, "unknown job", j.Kind)
		return 2, true
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 2, true
	}
	return 0, true
}

// stealLoop opens j.Path with j.Flags|O_CREAT (mode 0644) j.Count times,
// and then on until it met the other user's file (a refusal or a handle)
// or stealPatience has passed: whether a given open meets it depends on
// how the two users' processes are scheduled, and on a loaded machine
// (CI running other packages) a fixed number of tries once met it not
// at all. An open that returns a handle to another user's file is a
// theft; a file it created itself is removed again.
func stealLoop(j userJob, r *userResult, fail func(int, string, error)) {
	me := uint32(os.Getuid())
	start := time.Now()
	for i := 0; i < j.Count || r.EACCES+r.Foreign == 0 && time.Since(start) < stealPatience; i++ {
		r.Tries++
		fd, err := syscall.Open(j.Path, j.Flags|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
		switch {
		case errors.Is(err, syscall.EACCES):
			r.EACCES++
			continue
		case err != nil:
			// ENOENT, EEXIST and the like: lost the race the other way.
			if r.Other == nil {
				r.Other = map[string]int{}
			}
			r.Other[err.Error()]++
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			fail(i, "fstat", err)
		}
		syscall.Close(fd)
		if st.Uid == me {
			r.Own++
			syscall.Unlink(j.Path)
		} else {
			r.Foreign++
		}
	}
}

// stealPatience bounds how long stealLoop goes on past j.Count tries
// without meeting the other user's file.
const stealPatience = 30 * time.Second

// churnLoop creates j.Path as a private file and removes it, until
// j.StopFile exists.
func churnLoop(j userJob, fail func(int, string, error)) {
	for i := 0; ; i++ {
		if _, err := os.Stat(j.StopFile); err == nil {
			return
		}
		fd, err := syscall.Open(j.Path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			syscall.Write(fd, []byte("private data of the victim"))
			syscall.Close(fd)
		}
		syscall.Unlink(j.Path)
	}
}

// multiLoop is the multi-user loop of issue 19 (finding 4), Count times in
// a fresh subdirectory of j.Dir each: mkdir -p d/foo/bar/baz, create foo
// (0400, empty) and bar (0400, 21 bytes) with O_WRONLY|O_CREAT|O_TRUNC,
// write, close, unlink foo, mkdir foo; bar must read back.
func multiLoop(j userJob, fail func(int, string, error)) {
	const barData = "012345678901234567890"
	for i := range j.Count {
		d := filepath.Join(j.Dir, fmt.Sprint(i))
		if err := os.MkdirAll(filepath.Join(d, "d/foo/bar/baz"), 0o777); err != nil {
			fail(i, "mkdir -p", err)
			continue
		}
		for _, f := range []struct{ name, data string }{{"foo", ""}, {"bar", barData}} {
			fd, err := syscall.Open(filepath.Join(d, f.name), syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o400)
			if err != nil {
				fail(i, "create "+f.name, err)
				continue
			}
			if f.data != "" {
				if n, err := syscall.Write(fd, []byte(f.data)); err != nil || n != len(f.data) {
					fail(i, "write "+f.name, fmt.Errorf("%d bytes: %v", n, err))
				}
			}
			if err := syscall.Close(fd); err != nil {
				fail(i, "close "+f.name, err)
			}
		}
		if err := syscall.Unlink(filepath.Join(d, "foo")); err != nil {
			fail(i, "unlink foo", err)
		}
		if err := syscall.Mkdir(filepath.Join(d, "foo"), 0o777); err != nil {
			fail(i, "mkdir foo", err)
		}
		if b, err := os.ReadFile(filepath.Join(d, "bar")); err != nil || string(b) != barData {
			fail(i, "read back bar", fmt.Errorf("%q, %v", b, err))
		}
	}
}

// singleLoop is the single-user loop of issue 19 (finding 4): Count times
// create j.Dir/f with O_RDWR|O_CREAT|O_TRUNC 0666, write 10 bytes, close,
// open, read, close.
func singleLoop(j userJob, fail func(int, string, error)) {
	p := filepath.Join(j.Dir, "f")
	for i := range j.Count {
		data := fmt.Sprintf("%010d", i)
		fd, err := syscall.Open(p, syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o666)
		if err != nil {
			fail(i, "create", err)
			continue
		}
		if n, err := syscall.Write(fd, []byte(data)); err != nil || n != len(data) {
			fail(i, "write", fmt.Errorf("%d bytes: %v", n, err))
		}
		if err := syscall.Close(fd); err != nil {
			fail(i, "close after write", err)
		}
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			fail(i, "open", err)
			continue
		}
		buf := make([]byte, 64)
		n, err := syscall.Read(fd, buf)
		if err != nil || string(buf[:max(n, 0)]) != data {
			fail(i, "read", fmt.Errorf("%q, %v", buf[:max(n, 0)], err))
		}
		if err := syscall.Close(fd); err != nil {
			fail(i, "close after read", err)
		}
	}
}

var (
	workerOnce sync.Once
	workerPath string
	workerErr  error
)

// workerBinary returns a copy of the test binary that other users may run
// (go test builds it in a directory private to root), made once per test
// process in a directory of its own that TestMain removes at exit.
func workerBinary(t *testing.T) string {
	t.Helper()
	workerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gocryptfs-cli-worker")
		if err != nil {
			workerErr = err
			return
		}
		workerDir = dir
		if err := os.Chmod(dir, 0o755); err != nil {
			workerErr = err
			return
		}
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			workerErr = err
			return
		}
		workerPath = filepath.Join(dir, "worker")
		workerErr = os.WriteFile(workerPath, b, 0o755)
	})
	if workerErr != nil {
		t.Fatal(workerErr)
	}
	return workerPath
}

// workerDir holds the copy of workerBinary; TestMain removes it.
var workerDir string

// userProc is a running worker.
type userProc struct {
	cmd *exec.Cmd
	out []byte
	err error
	wg  sync.WaitGroup
}

// startUserJob starts the test binary as uid:gid (no supplementary groups)
// running j.
func startUserJob(t *testing.T, uid uint32, j userJob) *userProc {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(workerBinary(t))
	cmd.Env = append(os.Environ(), userJobEnv+"="+string(b))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}}
	cmd.Stderr = os.Stderr
	p := &userProc{cmd: cmd}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		var buf [4096]byte
		for {
			n, err := out.Read(buf[:])
			p.out = append(p.out, buf[:n]...)
			if err != nil {
				break
			}
		}
		p.err = cmd.Wait()
	}()
	return p
}

// wait waits for the worker and returns its result.
func (p *userProc) wait(t *testing.T) userResult {
	t.Helper()
	p.wg.Wait()
	if p.err != nil {
		t.Fatalf("worker %v: %v: %s", p.cmd.SysProcAttr.Credential.Uid, p.err, p.out)
	}
	var r userResult
	if err := json.Unmarshal(p.out, &r); err != nil {
		t.Fatalf("worker output %q: %v", p.out, err)
	}
	return r
}

// openForUsers makes the mount point mnt and the directories above it
// (private temp dirs) reachable by other users.
func openForUsers(t *testing.T, mnt string) {
	t.Helper()
	for _, d := range []string{mnt, filepath.Dir(mnt), filepath.Dir(filepath.Dir(mnt))} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// mkdirFor creates dir owned by uid (0777 when uid is 0: shared).
func mkdirFor(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if uid == 0 {
		must(t, unix.Chmod(dir, 0o777))
		return
	}
	must(t, os.Chown(dir, uid, uid))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
