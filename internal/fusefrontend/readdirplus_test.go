//go:build linux

package fusefrontend

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestGetxattrFallbacks: getxattr answers from the regular backing name
// in one call, and still finds entries that are reached only through a
// fallback (here a -badname name) and missing attributes of existing ones.
func TestGetxattrFallbacks(t *testing.T) {
	tf := mountFS(t, testConfig{timeouts: true, badname: []string{"*"}})
	mustWrite(t, tf.path("regular"), nil)
	mustWrite(t, tf.cipher+"/garbage-name", nil)
	ents, err := os.ReadDir(tf.mnt)
	if err != nil {
		t.Fatal(err)
	}
	bad := ""
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "garbage-name") {
			bad = e.Name()
		}
	}
	if bad == "" {
		t.Fatalf("no -badname entry in %v", ents)
	}
	buf := make([]byte, 64)
	for _, name := range []string{"regular", bad} {
		p := tf.path(name)
		if _, err := syscall.Getxattr(p, "user.a", buf); err != syscall.ENODATA {
			t.Errorf("%s: missing attribute: %v, want ENODATA", name, err)
		}
		if err := syscall.Setxattr(p, "user.a", []byte("v-"+name), 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := syscall.Getxattr(p, "user.a", buf)
		if err != nil || string(buf[:n]) != "v-"+name {
			t.Errorf("%s: %q, %v", name, buf[:n], err)
		}
	}
	if _, err := syscall.Getxattr(tf.path("nonexistent"), "user.a", buf); err != syscall.ENOENT {
		t.Errorf("nonexistent: %v, want ENOENT", err)
	}
}
