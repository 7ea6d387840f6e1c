//go:build testhooks

package readpassword

// testHooks are the seams of the tests built with -tags testhooks (the
// release build has an empty testHooks, hooks.go). Set them before use.
type testHooks struct {
	// isTerminal, if set, tells whether stdin is a terminal.
	isTerminal func() bool
	// target, if set, names what stdin is connected to.
	target func() string
	// readTerminal, if set, prints prompt and reads one line without echo.
	readTerminal func(prompt string) ([]byte, error)
}

func (h *testHooks) stdinIsTerminal() (isTerm, set bool) {
	if h.isTerminal == nil {
		return false, false
	}
	return h.isTerminal(), true
}

func (h *testHooks) stdinTarget() (target string, set bool) {
	if h.target == nil {
		return "", false
	}
	return h.target(), true
}

func (h *testHooks) terminal(prompt string) (pw []byte, err error, set bool) {
	if h.readTerminal == nil {
		return nil, nil, false
	}
	pw, err = h.readTerminal(prompt)
	return pw, err, true
}
