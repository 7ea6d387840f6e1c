package fusefrontend

import (
	"testing"

	"gocryptfs/internal/contentenc"
	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/nametransform"
)

func TestNewRootNodeArgs(t *testing.T) {
	cc, err := cryptocore.New(make([]byte, 32), cryptocore.Options{HKDF: true})
	if err != nil {
		t.Fatal(err)
	}
	ce, _ := contentenc.New(cc, contentenc.Options{})
	ntDef, _ := nametransform.New(cc, nametransform.Options{Raw64: true})
	ntPlain, _ := nametransform.New(cc, nametransform.Options{PlaintextNames: true})
	dir := t.TempDir()
	cases := []struct {
		name    string
		args    Args
		nt      *nametransform.NameTransform
		ce      *contentenc.ContentEnc
		wantErr bool
	}{
		{"ok", Args{CipherDir: dir}, ntDef, ce, false},
		{"missing dir", Args{CipherDir: dir + "/nope"}, ntDef, ce, true},
		{"nil nt", Args{CipherDir: dir}, nil, ce, true},
		{"nil ce", Args{CipherDir: dir}, ntDef, nil, true},
		{"plaintextnames mismatch", Args{CipherDir: dir}, ntPlain, ce, true},
		{"deterministic mismatch", Args{CipherDir: dir, DeterministicNames: true}, ntDef, ce, true},
		{"plaintextnames ok", Args{CipherDir: dir, PlaintextNames: true}, ntPlain, ce, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rn, err := NewRootNode(tc.args, tc.nt, tc.ce)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if rn != nil {
				if rn.OpenFileCount() != 0 {
					t.Fatal("fresh counters not zero")
				}
				rn.Close()
			}
		})
	}
}

func TestCleanRel(t *testing.T) {
	for in, want := range map[string]string{"": "", "/": "", "/a/b/": "a/b", "a/../b": "b", "../../x": "x", "a//b": "a/b"} {
		if got := cleanRel(in); got != want {
			t.Errorf("cleanRel(%q) = %q, want %q", in, got, want)
		}
	}
}
