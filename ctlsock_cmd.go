package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/exitcodes"
	"gocryptfs/internal/fuseserve"
)

// ctlsockTimeout bounds connecting to a mount's control socket for -info.
const ctlsockTimeout = 10 * time.Second

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

// mountInfo is the control socket's answer to an Info request: the
// transport statistics of the running mount.
func mountInfo(st fuseserve.Stats) ctlsock.MountInfo {
	return ctlsock.MountInfo{
		Transport:       st.Transport.String(),
		TransportReason: st.Reason,
		RingRequests:    st.RingRequests,
		DevRequests:     st.DevRequests,
		DevByOpcode:     st.DevByOpcode,
		RingQueues:      st.RingQueues,
		RingEntries:     st.RingEntries,
		PayloadSize:     st.PayloadSize,
	}
}

// queryMountInfo asks the mount listening on the control socket at path
// for its MountInfo (-info -ctlsock PATH). Failing to get it is exit 20.
func queryMountInfo(path string) (ctlsock.MountInfo, error) {
	fail := func(err error) (ctlsock.MountInfo, error) {
		return ctlsock.MountInfo{}, exitcodes.Errorf(exitcodes.CtlSock, "Cannot query the mount's control socket: %v", err)
	}
	c, err := ctlsock.Dial(path, ctlsockTimeout)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	resp, err := c.Query(ctlsock.Request{Info: true})
	if err != nil {
		return fail(err)
	}
	if resp.Info == nil {
		return fail(fmt.Errorf("the mount at %s does not answer Info requests", path))
	}
	return *resp.Info, nil
}

// devOpcodeNames names the FUSE opcodes that still travel through
// /dev/fuse when io_uring is in use; others are shown by number.
var devOpcodeNames = map[uint32]string{2: "FORGET", 26: "INIT", 36: "INTERRUPT", 42: "BATCH_FORGET"}

// printMountInfo writes the running mount's part of -info (docs/cli.md
// 6.2), labels padded to 19 columns like the config's lines. The request
// counts exist only for io_uring.
func printMountInfo(w io.Writer, mi ctlsock.MountInfo) {
	fmt.Fprintf(w, "%-19s%s (%s)\n", "Transport:", mi.Transport, mi.TransportReason)
	if mi.RingQueues == 0 {
		return
	}
	fmt.Fprintf(w, "%-19s%d queues, %d entries, %d B payload per entry\n", "Ring:", mi.RingQueues, mi.RingEntries, mi.PayloadSize)
	fmt.Fprintf(w, "%-19s%d\n", "RingRequests:", mi.RingRequests)
	var ops []string
	for _, op := range slices.Sorted(maps.Keys(mi.DevByOpcode)) {
		name, ok := devOpcodeNames[op]
		if !ok {
			name = fmt.Sprintf("opcode%d", op)
		}
		ops = append(ops, fmt.Sprintf("%s=%d", name, mi.DevByOpcode[op]))
	}
	fmt.Fprintf(w, "%-19s%d", "DevRequests:", mi.DevRequests)
	if len(ops) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(ops, " "))
	}
	fmt.Fprintln(w)
}
