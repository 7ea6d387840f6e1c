package ctlsock

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// QueryError is returned by Client.Query when the server answered with a
// non-zero ErrNo. Its message is "errno E: text", the form gocryptfs-xray
// prints.
type QueryError struct {
	ErrNo   int32
	ErrText string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("errno %d: %s", e.ErrNo, e.ErrText)
}

// Client is a connection to a control socket. It is not safe for
// concurrent use.
type Client struct {
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects to the control socket at path, giving up after timeout
// (0 means no timeout).
func Dial(path string, timeout time.Duration) (*Client, error) {
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, fmt.Errorf("ctlsock: connect to %s: %w", path, err)
	}
	return &Client{conn: c, r: bufio.NewReader(c)}, nil
}

// Query sends one request and waits for its response. A transport problem
// is returned as an error with a zero Response; a response with a non-zero
// ErrNo is returned together with a *QueryError.
func (c *Client) Query(req Request) (Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("ctlsock: encode request: %w", err)
	}
	if len(b) >= MaxRequestLen {
		return Response{}, fmt.Errorf("ctlsock: request of %d bytes exceeds the limit of %d", len(b), MaxRequestLen-1)
	}
	// One write per request: the server treats each read as one request.
	if _, err := c.conn.Write(b); err != nil {
		return Response{}, fmt.Errorf("ctlsock: send request: %w", err)
	}
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return Response{}, fmt.Errorf("ctlsock: read response: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("ctlsock: decode response %q: %w", line, err)
	}
	if resp.ErrNo != 0 {
		return resp, &QueryError{ErrNo: resp.ErrNo, ErrText: resp.ErrText}
	}
	return resp, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	return c.conn.Close()
}
