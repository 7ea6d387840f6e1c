// Package testutil is the plumbing shared by the tests of every package:
// the master key of the FORMAT.md test vectors and hex decoding, the table
// of reference vectors (../shared/vectors/README.md) with helpers that copy
// a vector to a temp dir and recreate its flattened symlinks, FUSE mount
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
