package fusefrontend_reverse

import (
	"log/slog"
	"os"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fusefrontend"
	"gocryptfs/internal/fuseserve"
	"gocryptfs/internal/mountopts"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/testutil"
	"gocryptfs/internal/testutil/coretest"
)

// fsConfig describes the crypto settings of a filesystem under test.
type fsConfig struct {
	masterKey      []byte
	hkdf           bool
	padded64       bool // Raw64 off
	plaintextNames bool
	deterministic  bool
	longNameMax    int
}

// newCrypto builds the AES-SIV NameTransform and ContentEnc for cfg.
func newCrypto(t testing.TB, cfg fsConfig) (*cryptocore.CryptoCore, *nametransform.NameTransform, *contentenc.ContentEnc) {
	t.Helper()
	core := coretest.New(t, coretest.Options{MasterKey: cfg.masterKey, Cipher: cryptocore.AESSIV, HKDF: cfg.hkdf, Names: nametransform.Options{
		PlaintextNames:     cfg.plaintextNames,
		DeterministicNames: cfg.deterministic,
		Raw64:              !cfg.padded64,
		LongNameMax:        cfg.longNameMax,
	}})
	return core.CC, core.NT, core.CE
}

// mounted is a mounted filesystem under test.
type mounted struct {
	mnt  string
	logs *testutil.SyncBuffer
}

func (m *mounted) path(p string) string {
	if p == "" {
		return m.mnt
	}
	return m.mnt + "/" + p
}

// serve mounts root on a fresh temp dir and unmounts it in t.Cleanup
// (cleanups run in reverse order, so a mount stacked on top of another one
// goes first).
func serve(t testing.TB, root fs.InodeEmbedder, reverse bool, rootAttr *fs.StableAttr, name string, logs *testutil.SyncBuffer, closeFn func()) *mounted {
	t.Helper()
	return serveAt(t, t.TempDir(), root, reverse, rootAttr, name, logs, closeFn)
}

// serveAt is serve on the existing directory mnt.
func serveAt(t testing.TB, mnt string, root fs.InodeEmbedder, reverse bool, rootAttr *fs.StableAttr, name string, logs *testutil.SyncBuffer, closeFn func()) *mounted {
	t.Helper()
	// The options of the binary (package mountopts), read-only both ways.
	opts := mountopts.Build(mountopts.Params{
		CipherDir: name,
		Reverse:   reverse,
		ReadOnly:  true,
		Debug:     os.Getenv("FUSEDEBUG") != "",
	})
	opts.RootStableAttr = rootAttr
	srv, err := fuseserve.Mount(mnt, root, opts, fuseserve.Options{ReadAheadKB: mountopts.ReadAheadKB})
	if err != nil {
		t.Fatalf("mount %s: %v", name, err)
	}
	t.Cleanup(func() {
		testutil.Unmount(t, mnt, srv.Unmount)
		srv.Wait()
		if closeFn != nil {
			closeFn()
		}
		if t.Failed() && logs != nil {
			t.Logf("%s log:\n%s", name, logs.String())
		}
	})
	return &mounted{mnt: mnt, logs: logs}
}

// mountReverse mounts the reverse view of args.PlainDir. setup, if given,
// runs on the RootNode before mounting.
func mountReverse(t testing.TB, cfg fsConfig, args Args, setup ...func(*RootNode)) (*mounted, *RootNode) {
	t.Helper()
	return mountReverseAt(t, "", cfg, args, setup...)
}

// mountReverseAt is mountReverse on the existing directory mnt ("": a new
// temp dir).
func mountReverseAt(t testing.TB, mnt string, cfg fsConfig, args Args, setup ...func(*RootNode)) (*mounted, *RootNode) {
	t.Helper()
	testutil.RequireFuse(t)
	_, nt, ce := newCrypto(t, cfg)
	logs := &testutil.SyncBuffer{}
	args.PlaintextNames = cfg.plaintextNames
	args.DeterministicNames = cfg.deterministic
	args.Logger = logs.Logger(slog.LevelDebug)
	rn, err := NewRootNode(args, nt, ce)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(rn)
	}
	if mnt == "" {
		mnt = t.TempDir()
	}
	m := serveAt(t, mnt, rn, true, rn.RootStableAttr(), "gocryptfs-reverse-test", logs, func() { rn.Close() })
	return m, rn
}

// mountForward mounts cipherDir (a reverse view) in forward mode.
func mountForward(t testing.TB, cfg fsConfig, cipherDir string) *mounted {
	t.Helper()
	testutil.RequireFuse(t)
	_, nt, ce := newCrypto(t, cfg)
	logs := &testutil.SyncBuffer{}
	rn, err := fusefrontend.NewRootNode(fusefrontend.Args{
		CipherDir:          cipherDir,
		PlaintextNames:     cfg.plaintextNames,
		DeterministicNames: cfg.deterministic,
		ReadOnly:           true,
		Logger:             logs.Logger(slog.LevelDebug),
	}, nt, ce)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, rn, false, rn.RootStableAttr(), "gocryptfs-forward-test", logs, func() { rn.Close() })
}
