//go:build !testhooks

package readpassword

// testHooks is empty in every build but the tests' (-tags testhooks, see
// hooks_testhooks.go): the seams that fake a terminal do not ship in the
// binary. The methods report "not set" and are inlined away.
type testHooks struct{}

func (*testHooks) stdinIsTerminal() (isTerm, set bool) { return false, false }

func (*testHooks) stdinTarget() (target string, set bool) { return "", false }

func (*testHooks) terminal(string) (pw []byte, err error, set bool) { return nil, nil, false }
