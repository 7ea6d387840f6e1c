package mountopts

import (
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestBuild: the options every mount (binary and FUSE tests) gets. Splice
// is off (READ replies are in-memory bytes, a splice attempt costs two
// system calls per reply) and writes come in 1 MiB requests.
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

// TestForwardLocks: the kernel keeps locks itself (exact POSIX semantics,
// seen through this mount only) unless -sharedstorage needs other mounts
// to see them; the reverse view never forwards.
func TestForwardLocks(t *testing.T) {
	cases := []struct {
		p    Params
		want bool
	}{
		{Params{}, false},
		{Params{NoWriteCache: true}, false},
		{Params{ReadOnly: true}, false},
		{Params{SharedStorage: true}, true},
		{Params{SharedStorage: true, ReadOnly: true}, true},
		{Params{SharedStorage: true, Reverse: true, ReadOnly: true}, false},
		{Params{Reverse: true, ReadOnly: true}, false},
	}
	for _, c := range cases {
		if got := ForwardLocks(c.p); got != c.want {
			t.Errorf("%+v: ForwardLocks %v, want %v", c.p, got, c.want)
		}
		if got := Build(c.p).EnableLocks; got != c.want {
			t.Errorf("%+v: EnableLocks %v, want %v", c.p, got, c.want)
		}
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

// TestWriteback: the writeback cache is on for a normal read-write mount
// and off wherever the kernel's cached size could be wrong or nothing is
// written.
func TestWriteback(t *testing.T) {
	cases := []struct {
		p    Params
		want bool
	}{
		{Params{}, true},
		{Params{NoWriteCache: true}, false},
		{Params{SharedStorage: true}, false},
		{Params{ReadOnly: true}, false},
		{Params{Reverse: true, ReadOnly: true}, false},
	}
	for _, c := range cases {
		if got := Writeback(c.p); got != c.want {
			t.Errorf("%+v: Writeback %v, want %v", c.p, got, c.want)
		}
		caps := Build(c.p).ExtraCapabilities
		if got := caps&fuse.CAP_WRITEBACK_CACHE != 0; got != c.want {
			t.Errorf("%+v: CAP_WRITEBACK_CACHE %v, want %v", c.p, got, c.want)
		}
		// The frontend handles set-id bits itself wherever it writes.
		if got, want := caps&capHandleKillprivV2 != 0, !c.p.ReadOnly && capHandleKillprivV2 != 0; got != want {
			t.Errorf("%+v: CAP_HANDLE_KILLPRIV_V2 %v, want %v", c.p, got, want)
		}
	}
}

// TestForwardFileHandlesAndAtime: forward mounts use the shown inode
// numbers as node IDs with export support (file handles), ask for the
// unmasked creation mode with -acl, and never hand relatime or
// strictatime to fusermount3 (the frontend applies them).
func TestForwardFileHandlesAndAtime(t *testing.T) {
	fwd := Build(Params{CipherDir: "/c", ACL: true, KernelOptions: "strictatime,relatime,noatime"})
	if !fwd.ExternalNodeID {
		t.Errorf("forward: ExternalNodeID %v", fwd.ExternalNodeID)
	}
	const want = fuse.CAP_EXPORT_SUPPORT | fuse.CAP_DONT_MASK
	if fwd.ExtraCapabilities&want != want {
		t.Errorf("forward: capabilities %#x lack %#x", fwd.ExtraCapabilities, want)
	}
	if got := strings.Join(fwd.Options, ","); !strings.Contains(got, "noatime") || strings.Contains(got, "relatime") || strings.Contains(got, "strictatime") {
		t.Errorf("kernel options %q", got)
	}
	if noACL := Build(Params{CipherDir: "/c"}); noACL.ExtraCapabilities&fuse.CAP_DONT_MASK != 0 {
		t.Error("FUSE_DONT_MASK without -acl")
	}
	rev := Build(Params{CipherDir: "/c", Reverse: true})
	if rev.ExternalNodeID || rev.ExtraCapabilities&fuse.CAP_EXPORT_SUPPORT != 0 {
		t.Error("reverse mounts get the forward file-handle options")
	}
}
