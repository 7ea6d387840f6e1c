//go:build without_openssl

package cli_test

// buildTags returns the build tags the binary under test is built with,
// matching those of the test run.
func buildTags() string { return "without_openssl" }
