//go:build testhooks

// The identity test that needs the test hooks (hooks_testhooks.go);
// test.bash runs it with -tags testhooks.

package fusefrontend

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPanicAsCaller: a panic inside an operation that runs with the
// caller's identity (a CREATE under -allow_other, panicking after the
// switch) fails that request with EIO, and afterwards no thread of the
// daemon (this process) has the caller's filesystem identity; the next
// creates get the right owners.
func TestPanicAsCaller(t *testing.T) {
	tf := mountAllowOther(t, false)
	var armed atomic.Bool
	fail := func(step string) error {
		if step == "create-as-caller" && armed.CompareAndSwap(true, false) {
			if fsuid, _ := unix.SetfsuidRetUid(-1); fsuid != callerUid {
				t.Errorf("create-as-caller runs with fsuid %d, want %d", fsuid, callerUid)
			}
			panic("injected panic as the caller")
		}
		return nil
	}
	tf.rn.hooks.fail.Store(&fail)
	must(t, os.Chmod(tf.mnt, 0o777))
	armed.Store(true)
	out, err := runAs(tf.mnt, callerUid, callerGid, nil, "touch f")
	if err == nil || !strings.Contains(string(out), "nput/output error") {
		t.Errorf("create with a panic: %v: %s; want EIO", err, out)
	}
	if !strings.Contains(tf.logs.String(), "injected panic as the caller") {
		t.Error("panic not logged")
	}
	ents, err := os.ReadDir("/proc/self/task")
	must(t, err)
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			continue // exited meanwhile
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 5 && f[0] == "Uid:" && f[4] != "0" {
				t.Errorf("thread %s kept fsuid %s after the panic", e.Name(), f[4])
			}
		}
	}
	// Many creates, as the caller and as root, land on all threads.
	if out, err := runAs(tf.mnt, callerUid, callerGid, nil, "for i in 1 2 3 4 5 6 7 8; do touch u$i; done"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i := 1; i <= 8; i++ {
		mustWrite(t, tf.path(fmt.Sprintf("r%d", i)), nil)
	}
	for i := 1; i <= 8; i++ {
		for name, uid := range map[string]uint32{fmt.Sprintf("u%d", i): callerUid, fmt.Sprintf("r%d", i): 0} {
			var st unix.Stat_t
			must(t, unix.Lstat(tf.path(name), &st))
			if st.Uid != uid {
				t.Errorf("%s: owner %d, want %d", name, st.Uid, uid)
			}
		}
	}
}
