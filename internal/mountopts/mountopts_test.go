package mountopts

import (
	"strings"
	"testing"
)

// TestBuild: the options every mount (binary and FUSE tests) gets. Splice
// is off (READ replies are in-memory bytes, a splice attempt costs two
// system calls per reply), writes come in 1 MiB requests, and locks are
// forwarded in forward mode only.
func TestBuild(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		o := Build(Params{Reverse: reverse, ReadOnly: reverse, CipherDir: "/c"})
		mo := o.MountOptions
		if !mo.DisableSplice {
			t.Errorf("reverse=%v: splice not disabled", reverse)
		}
		if mo.MaxWrite != MaxWrite {
			t.Errorf("reverse=%v: MaxWrite %d", reverse, mo.MaxWrite)
		}
		if mo.EnableLocks == reverse {
			t.Errorf("reverse=%v: EnableLocks=%v", reverse, mo.EnableLocks)
		}
		if mo.FsName != "/c" || mo.Name != FsType(reverse) {
			t.Errorf("reverse=%v: FsName %q Name %q", reverse, mo.FsName, mo.Name)
		}
		if *o.EntryTimeout != CacheTimeout || *o.AttrTimeout != CacheTimeout || !o.NullPermissions {
			t.Errorf("reverse=%v: timeouts %v/%v", reverse, *o.EntryTimeout, *o.AttrTimeout)
		}
	}
	if o := Build(Params{SharedStorage: true}); *o.EntryTimeout != 0 || *o.AttrTimeout != 0 || *o.NegativeTimeout != 0 {
		t.Error("-sharedstorage must disable kernel caching")
	}
}

func TestKernelOptions(t *testing.T) {
	cases := []struct {
		p    Params
		want string
	}{
		{Params{}, "nosuid,nodev"},
		{Params{RW: true}, "rw,nosuid,nodev"},
		{Params{ReadOnly: true, RW: true}, "ro,nosuid,nodev"},
		{Params{Suid: true, Dev: true, Exec: true}, "suid,dev,exec"},
		{Params{NoExec: true, Exec: true, AllowOther: true, Context: "x_t"}, "nosuid,nodev,noexec,default_permissions,context=x_t"},
		{Params{KernelOptions: "noatime,,noexec"}, "nosuid,nodev,noatime,noexec"},
	}
	for _, c := range cases {
		if got := strings.Join(KernelOptions(c.p), ","); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.p, got, c.want)
		}
	}
}
