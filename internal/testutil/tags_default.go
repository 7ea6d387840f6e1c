//go:build !without_openssl

package testutil

// BuildTags returns the build tags of this test run, for building the
// binaries under test the same way ("" or "without_openssl").
func BuildTags() string { return "" }
