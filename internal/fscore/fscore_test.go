package fscore_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fscore"
	"gocryptfs/internal/nametransform"
)

func TestNew(t *testing.T) {
	mk := bytes.Repeat([]byte{7}, cryptocore.KeyLen)
	// AES-SIV has no OpenSSL implementation: asked for, Go's is used.
	c, err := fscore.New(mk, fscore.Options{Cipher: cryptocore.AESSIV, Backend: cryptocore.BackendOpenSSL, HKDF: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CC.Wipe()
	if c.CC.Cipher != cryptocore.AESSIV || c.CC.Backend != cryptocore.BackendGo {
		t.Errorf("cipher %v, backend %v", c.CC.Cipher, c.CC.Backend)
	}
	iv := bytes.Repeat([]byte{1}, nametransform.DirIVLen)
	enc, err := c.NT.EncryptName("hello", iv)
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := c.NT.DecryptName(enc, iv); err != nil || dec != "hello" {
		t.Errorf("name round trip: %q, %v", dec, err)
	}
	id := make([]byte, 16)
	blk := c.CE.EncryptBlock(nil, []byte("data"), 0, id)
	if dec, err := c.CE.DecryptBlock(nil, blk, 0, id); err != nil || string(dec) != "data" {
		t.Errorf("content round trip: %q, %v", dec, err)
	}
}

// TestNewErrors: each step's failure has its kind and the user's message.
func TestNewErrors(t *testing.T) {
	mk := make([]byte, cryptocore.KeyLen)
	for _, c := range []struct {
		o    fscore.Options
		kind error
		msg  string
	}{
		{fscore.Options{Cipher: cryptocore.ContentCipher(99)}, fscore.ErrCiphers, "Cannot set up the ciphers: "},
		{fscore.Options{Names: nametransform.Options{LongNameMax: 20}}, fscore.ErrNames, "Cannot set up name encryption: "},
		{fscore.Options{Names: nametransform.Options{BadnamePatterns: []string{"["}}}, fscore.ErrNames, "Cannot set up name encryption: "},
	} {
		_, err := fscore.New(mk, c.o)
		if !errors.Is(err, c.kind) || err == nil || !strings.HasPrefix(err.Error(), c.msg) {
			t.Errorf("%+v: %v, want %v", c.o, err, c.kind)
		}
	}
}
