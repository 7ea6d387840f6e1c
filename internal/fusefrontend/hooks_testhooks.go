//go:build testhooks

package fusefrontend

import "sync/atomic"

// testHooks are the seams of the tests built with -tags testhooks (the
// release build has an empty testHooks, hooks.go). Both may be set and
// cleared while mounted.
type testHooks struct {
	// hook, if set, runs at the start of every operation with the
	// operation's name (panic injection, counting requests).
	hook atomic.Pointer[func(op string)]
	// fail, if set, is asked by inject for a failure to simulate at a
	// named step (cleanup paths).
	fail atomic.Pointer[func(step string) error]
}

func (h *testHooks) enter(op string) {
	if f := h.hook.Load(); f != nil {
		(*f)(op)
	}
}

func (h *testHooks) inject(step string) error {
	if f := h.fail.Load(); f != nil {
		return (*f)(step)
	}
	return nil
}
