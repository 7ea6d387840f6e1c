// Package ctlsock implements the control socket of docs/cli.md section 8: a Unix
// stream socket on which a running mount translates paths between their
// plaintext and ciphertext forms (used by gocryptfs-xray -encrypt-paths /
// -decrypt-paths and by scripts) and, as an extension, reports how it is
// served (an Info request, used by gocryptfs -info -ctlsock).
//
// Protocol: the client writes one JSON request object per write; the server
// reads up to MaxRequestLen bytes at a time, treats each read as exactly
// one request and answers with one JSON Response followed by "\n". The
// connection stays open for further requests. A read that fills the whole
// buffer (MaxRequestLen bytes or more) closes the connection without an
// answer, so that a runaway client cannot make the server buffer unbounded
// input.
//
// The server is created with Listen before the password is asked for (so
// that a bad socket path fails early) and starts answering with Serve once
// the filesystem, which does the actual translation, exists.
package ctlsock

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"
)

// MaxRequestLen is the size of the server's read buffer. A read that
// returns this many bytes is treated as oversized and closes the
// connection.
const MaxRequestLen = 5000

// Translator maps paths between the plaintext view and the ciphertext
// directory. The forward and the reverse RootNode both implement it. Paths
// given to it are canonical: relative, cleaned, non-empty. An error says
// "bad message" to the client when some error in its chain has a method
// Undecryptable() bool that returns true (nametransform.ErrBadName does),
// otherwise its errno or its text.
type Translator interface {
	// EncryptPath returns the ciphertext path of a plaintext path.
	EncryptPath(plainPath string) (string, error)
	// DecryptPath returns the plaintext path of a ciphertext path.
	DecryptPath(cipherPath string) (string, error)
}

// Request is one control-socket request. Exactly one field must be
// non-empty (Info: true). Field names are matched case-insensitively when
// decoding, as by the reference.
type Request struct {
	EncryptPath string `json:"EncryptPath,omitempty"`
	DecryptPath string `json:"DecryptPath,omitempty"`
	// Info asks for the mount's MountInfo (an extension; the reference
	// ignores the field and answers "empty input").
	Info bool `json:"Info,omitempty"`
}

// Response is the answer to one request. The first four fields are always
// sent, in this order; Info only in the answer to an Info request, so that
// the answers to path requests are those of the reference byte for byte.
type Response struct {
	// Result is the translated path, empty on error.
	Result string
	// ErrNo is 0 on success, a positive errno when one is known, else -1.
	ErrNo int32
	// ErrText explains a failure.
	ErrText string
	// WarnText is set when the input path was not canonical.
	WarnText string
	// Info answers an Info request.
	Info *MountInfo `json:",omitempty"`
}

// MountInfo is what an Info request reports about the running mount: the
// FUSE transport and how many requests travelled which way.
type MountInfo struct {
	// Transport is "io_uring" or "/dev/fuse"; TransportReason says why,
	// e.g. "io_uring off: /sys/module/fuse/parameters/enable_uring is N".
	Transport       string
	TransportReason string
	// RingRequests were served from io_uring ring entries; DevRequests
	// through /dev/fuse while io_uring is in use (INIT, FORGET,
	// INTERRUPT, and whatever came before the rings were ready),
	// DevByOpcode per FUSE opcode. Requests of the classic transport are
	// not counted: all three are zero then.
	RingRequests uint64
	DevRequests  uint64
	DevByOpcode  map[uint32]uint64 `json:",omitempty"`
	// RingQueues is the number of io_uring queues (one per possible CPU),
	// RingEntries the entries registered in all of them so far, and
	// PayloadSize the payload buffer of each entry in bytes; zero with
	// the classic transport.
	RingQueues  int
	RingEntries int
	PayloadSize int
}

// Error texts that clients may compare against (docs/cli.md section 8).
const (
	// TextAmbiguous: both EncryptPath and DecryptPath were given.
	TextAmbiguous = "Ambiguous"
	// TextEmptyInput: neither field was given.
	TextEmptyInput = "empty input"
	// TextEmptyAfterCanon: the path vanished (or climbed above the root)
	// when canonicalized.
	TextEmptyAfterCanon = "empty input after canonicalization"
	// TextBadMessage: a ciphertext name that cannot be decrypted. The
	// reference reports it with ErrNo -1 and EBADMSG's text.
	TextBadMessage = "bad message"
	// TextNotMounted: an Info request before the filesystem is mounted.
	TextNotMounted = "not mounted yet"
)

// Canonicalize cleans a user-supplied path the way the server interprets
// it: leading slashes removed, "." and ".." components and duplicate or
// trailing slashes resolved. A path that becomes empty, or that would climb
// above the root, yields "".
func Canonicalize(in string) string {
	clean := path.Clean(in)
	clean = strings.TrimLeft(clean, "/")
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return ""
	}
	return clean
}

// Handle answers one path request with t. It never fails: every problem
// is reported inside the Response. It ignores req.Info: the Server hands
// Info requests to HandleInfo instead.
func Handle(t Translator, req Request) Response {
	var resp Response
	in, encrypt := req.EncryptPath, true
	switch {
	case req.EncryptPath != "" && req.DecryptPath != "":
		return errResponse(-1, TextAmbiguous)
	case req.EncryptPath == "" && req.DecryptPath == "":
		return errResponse(-1, TextEmptyInput)
	case req.DecryptPath != "":
		in, encrypt = req.DecryptPath, false
	}
	clean := Canonicalize(in)
	if clean != in {
		resp.WarnText = fmt.Sprintf("Non-canonical input path '%s' has been interpreted as '%s'.", in, clean)
	}
	if clean == "" {
		resp.ErrNo, resp.ErrText = -1, TextEmptyAfterCanon
		return resp
	}
	var out string
	var err error
	if encrypt {
		out, err = t.EncryptPath(clean)
	} else {
		out, err = t.DecryptPath(clean)
	}
	if err != nil {
		resp.ErrNo, resp.ErrText = errnoOf(err)
		return resp
	}
	resp.Result = out
	return resp
}

// HandleInfo answers an Info request with what info returns; info is
// nil while the filesystem is not mounted yet. A request that also names
// a path is ambiguous.
func HandleInfo(info func() MountInfo, req Request) Response {
	switch {
	case req.EncryptPath != "" || req.DecryptPath != "":
		return errResponse(-1, TextAmbiguous)
	case info == nil:
		return errResponse(-1, TextNotMounted)
	}
	mi := info()
	return Response{Info: &mi}
}

func errResponse(errno int32, text string) Response {
	return Response{ErrNo: errno, ErrText: text}
}

// undecryptable is implemented by the errors that say a name cannot be
// decrypted (nametransform.ErrBadName): see Translator.
type undecryptable interface{ Undecryptable() bool }

// errnoOf maps a translation error to the ErrNo/ErrText pair: an
// undecryptable name is -1 "bad message"; an error carrying an errno is
// reported with that errno and its standard text (the context in the
// message is dropped, as the reference does); anything else is -1 with the
// error's message.
func errnoOf(err error) (int32, string) {
	var u undecryptable
	if errors.As(err, &u) && u.Undecryptable() {
		return -1, TextBadMessage
	}
	var en syscall.Errno
	if errors.As(err, &en) && en != 0 {
		return int32(en), en.Error()
	}
	return -1, err.Error()
}

// Marshal encodes a response as it goes over the wire: JSON followed by
// "\n".
func (r Response) Marshal() []byte {
	// Marshalling strings, integers and a map with integer keys cannot
	// fail.
	b, _ := json.Marshal(r)
	return append(b, '\n')
}

// parseRequest decodes one request; a decoding failure becomes the error
// response the reference sends ("JSON Unmarshal error: ...").
func parseRequest(data []byte) (Request, *Response) {
	var req Request
	if err := json.Unmarshal(data, &req); err != nil {
		r := errResponse(-1, "JSON Unmarshal error: "+err.Error())
		return req, &r
	}
	return req, nil
}
