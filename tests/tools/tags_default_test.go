//go:build !without_openssl

package tools_test

// buildTags returns the build tags the binaries under test are built with,
// matching those of the test run.
func buildTags() string { return "" }
