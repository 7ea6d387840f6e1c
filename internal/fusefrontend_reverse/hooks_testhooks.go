//go:build testhooks

package fusefrontend_reverse

// testHooks is the seam of the tests built with -tags testhooks (the
// release build has an empty testHooks, hooks.go).
type testHooks struct {
	// hook, if set, runs at the start of the main operations with the
	// operation's name (panic injection). It is set before mounting and
	// never changed.
	hook func(op string)
}

func (h *testHooks) enter(op string) {
	if h.hook != nil {
		h.hook(op)
	}
}
