package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"gocryptfs/internal/ctlsock"
	"gocryptfs/internal/exitcodes"
)

// dialTimeout bounds connecting to the control socket.
const dialTimeout = 10 * time.Second

// transformPaths sends every item read from stdin (separated by "\n", or
// NUL with sep0; a last item without separator counts too) to the control
// socket at sockPath and prints each result followed by the separator.
// Failed items print an error line on stderr and nothing on stdout;
// warnings go to stderr too. It returns 1 if any item failed (docs/cli.md 9).
func transformPaths(sockPath string, encrypt, sep0 bool, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := ctlsock.Dial(sockPath, dialTimeout)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitcodes.Usage
	}
	defer c.Close()
	sep := byte('\n')
	if sep0 {
		sep = 0
	}
	r := bufio.NewReader(stdin)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	failed := 0
	for line := 1; ; line++ {
		item, rerr := r.ReadString(sep)
		if rerr != nil && rerr != io.EOF {
			fmt.Fprintf(stderr, "error reading input line %d: %v\n", line, rerr)
			return exitcodes.Usage
		}
		if rerr == io.EOF && item == "" {
			break
		}
		if len(item) > 0 && item[len(item)-1] == sep {
			item = item[:len(item)-1]
		}
		req := ctlsock.Request{DecryptPath: item}
		if encrypt {
			req = ctlsock.Request{EncryptPath: item}
		}
		resp, err := c.Query(req)
		var qe *ctlsock.QueryError
		switch {
		case errors.As(err, &qe):
			fmt.Fprintf(stderr, "error at input line %d %q: %v\n", line, item, err)
			failed++
		case err != nil:
			// The connection is unusable; report and stop.
			fmt.Fprintf(stderr, "error at input line %d %q: %v\n", line, item, err)
			return exitcodes.Usage
		default:
			if resp.WarnText != "" {
				fmt.Fprintf(stderr, "warning at input line %d %q: %s\n", line, item, resp.WarnText)
			}
			w.WriteString(resp.Result)
			w.WriteByte(sep)
			// Flush per item so that interactive use sees answers at once.
			if err := w.Flush(); err != nil {
				return exitcodes.Other
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if failed > 0 {
		return exitcodes.Usage
	}
	return exitcodes.Success
}
