// Package testutil is the plumbing shared by the tests of every package:
// the master key of the docs/format.md test vectors and hex decoding, the
// table of reference vectors (testdata/vectors/README.md, read from the
// repository) with helpers that copy a vector to a temp dir as the
// reference wrote it (symlinks real or flattened, empty directories), FUSE mount
// helpers (skip without /dev/fuse, unmount with retries), a log buffer safe
// for concurrent FUSE requests, a tree checksum, and building and running
// the project's binaries with a timeout.
//
// It imports only the standard library and golang.org/x/sys, so that the
// in-package tests of any package (cryptocore's included) can use it
// without an import cycle. Everything here is for tests: helpers take a
// testing.TB and fail or skip the test instead of returning errors, except
// where TestMain (which has no testing.TB) calls them.
package testutil
