package main

import (
	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/exitcodes"
)

// startCtlsock creates the control socket requested with -ctlsock (docs/cli.md
// 8). It runs before the password is asked for, so that an unusable path
// fails early (exit 20). It returns nil without -ctlsock; the nil server's
// Serve and Close do nothing. The mount calls Serve with its root node
// once the filesystem exists and Close (which removes the socket file)
// when it ends.
func startCtlsock(e *env, a *argContainer) (*ctlsock.Server, error) {
	if a.ctlsock == "" {
		return nil, nil
	}
	s, err := ctlsock.Listen(a.ctlsock, ctlsock.Options{Logger: e.log})
	if err != nil {
		return nil, exitcodes.Errorf(exitcodes.CtlSock, "Cannot create control socket: %v", err)
	}
	return s, nil
}
