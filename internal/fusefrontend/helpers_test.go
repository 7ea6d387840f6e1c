package fusefrontend

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// testConfig selects the filesystem variant a test mounts.
type testConfig struct {
	cipher         cryptocore.ContentCipher
	plaintextNames bool
	deterministic  bool
	padded64       bool
	longNameMax    int
	badname        []string
	args           Args // CipherDir, names flags and Logger are filled in
	timeouts       bool // 1 s entry/attr timeouts like a real mount
	writeback      bool // with timeouts: the kernel's writeback cache, as the binary mounts
	masterKey      []byte
	noHKDF         bool
	kernelOptions  string // -ko
	// keepFlush answers FLUSH requests also where the backing filesystem
	// needs no close-time flush (flush.go), to reach the FLUSH path on any
	// filesystem.
	keepFlush bool
}

// testFS is a mounted filesystem: mnt is the plaintext view, cipher the
// backing CIPHERDIR.
type testFS struct {
	mnt, cipher string
	rn          *RootNode
	srv         *fuseserve.Server
	logs        *testutil.SyncBuffer
}

// mountFS creates a CIPHERDIR with a zero master key, mounts it on a temp
// dir and unmounts it in t.Cleanup.
func mountFS(t testing.TB, cfg testConfig) *testFS {
	t.Helper()
	testutil.RequireFuse(t)
	cipherDir := t.TempDir()
	return mountExisting(t, cfg, cipherDir, true)
}

func mountExisting(t testing.TB, cfg testConfig, cipherDir string, init bool) *testFS {
	t.Helper()
	return mountExistingOpts(t, cfg, cipherDir, init, nil)
}

// mountExistingOpts mounts cipherDir; mo, if set, adjusts the mount options.
func mountExistingOpts(t testing.TB, cfg testConfig, cipherDir string, init bool, mo func(*fuse.MountOptions)) *testFS {
	t.Helper()
	testutil.RequireFuse(t)
	mnt := t.TempDir()
	key := cfg.masterKey
	if key == nil {
		key = make([]byte, cryptocore.KeyLen)
	}
	core := coretest.New(t, coretest.Options{MasterKey: key, Cipher: cfg.cipher, HKDF: !cfg.noHKDF, Names: nametransform.Options{
		PlaintextNames:     cfg.plaintextNames,
		DeterministicNames: cfg.deterministic,
		Raw64:              !cfg.padded64,
		LongNameMax:        cfg.longNameMax,
		BadnamePatterns:    cfg.badname,
	}})
	nt, ce := core.NT, core.CE
	if init && nt.UsesDirIV() {
		fd, err := unix.Open(cipherDir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nametransform.WriteDirIVAt(fd); err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
	}
	logs := &testutil.SyncBuffer{}
	args := cfg.args
	args.CipherDir = cipherDir
	args.PlaintextNames = cfg.plaintextNames
	args.DeterministicNames = cfg.deterministic
	args.Logger = logs.Logger(slog.LevelDebug)
	// The options of the binary (package mountopts). Without cfg.timeouts
	// the kernel caches nothing, as with -sharedstorage, so that tests may
	// change CIPHERDIR behind the mount's back.
	params := mountopts.Params{
		CipherDir:     cipherDir,
		ReadOnly:      args.ReadOnly,
		AllowOther:    args.AllowOther,
		ACL:           args.ACL,
		KernelOptions: cfg.kernelOptions,
		SharedStorage: args.SharedStorage || !cfg.timeouts,
		NoWriteCache:  !cfg.writeback,
		Debug:         os.Getenv("FUSE_DEBUG") != "",
	}
	args.Writeback = mountopts.Writeback(params)
	args.ForwardLocks = mountopts.ForwardLocks(params)
	if cfg.writeback && !args.Writeback {
		t.Fatal("testConfig: writeback needs timeouts and a read-write mount")
	}
	rn, err := NewRootNode(args, nt, ce)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.keepFlush {
		rn.flush = true // before mounting: read without locks
	}
	opts := mountopts.Build(params)
	opts.RootStableAttr = rn.RootStableAttr() // as mount.go does
	if mo != nil {
		mo(&opts.MountOptions)
	}
	srv, err := fuseserve.Mount(mnt, rn, opts, fuseserve.Options{ReadAheadKB: mountopts.ReadAheadKB, Attrs: mountopts.Attrs(params)})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	tf := &testFS{mnt: mnt, cipher: cipherDir, rn: rn, srv: srv, logs: logs}
	t.Cleanup(func() {
		testutil.Unmount(t, mnt, srv.Unmount)
		srv.Wait()
		rn.Close()
		if t.Failed() {
			t.Logf("filesystem log:\n%s", logs.String())
		}
	})
	return tf
}

func (tf *testFS) path(p string) string { return filepath.Join(tf.mnt, p) }

// cipherEntries lists the backing directory (relative to CIPHERDIR).
func (tf *testFS) cipherEntries(t testing.TB, rel string) []string {
	t.Helper()
	return dirNames(t, filepath.Join(tf.cipher, rel))
}

// dirNames lists a directory, sorted.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func mustWrite(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cipherSnapshot lists every backing path below dir with its mode and,
// for gocryptfs.diriv and long-name files, the content.
func cipherSnapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := rel + " " + info.Mode().String()
		base := filepath.Base(p)
		if base == nametransform.DirIVFilename || strings.HasSuffix(base, nametransform.LongNameSuffix) {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
