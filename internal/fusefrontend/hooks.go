//go:build !testhooks

package fusefrontend

// testHooks is empty in every build but the tests' (-tags testhooks, see
// hooks_testhooks.go): the seams through which tests inject panics and
// failures do not ship in the binary. The methods do nothing and are
// inlined away.
type testHooks struct{}

// enter is where a test hook would run at the start of an operation.
func (*testHooks) enter(string) {}

// inject is where a test would make the named step of an operation fail.
func (*testHooks) inject(string) error { return nil }
