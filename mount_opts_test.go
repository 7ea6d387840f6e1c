package main

import "testing"

// TestFuseOptionsNoSplice: go-fuse's splice attempt on READ replies
// (which are always in-memory bytes here) costs two system calls per
// reply for nothing (see BenchmarkMountRead in internal/fusefrontend).
func TestFuseOptionsNoSplice(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		o := fuseOptions(&argContainer{reverse: reverse, cipherdir: "/c"}, reverse)
		if !o.MountOptions.DisableSplice {
			t.Errorf("reverse=%v: splice not disabled", reverse)
		}
	}
}
