//go:build !testhooks

package fusefrontend_reverse

// testHooks is empty in every build but the tests' (-tags testhooks, see
// hooks_testhooks.go): the panic-injection seam does not ship in the
// binary; enter does nothing and is inlined away.
type testHooks struct{}

// enter is where a test hook would run at the start of an operation.
func (*testHooks) enter(string) {}
