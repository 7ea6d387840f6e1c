package cryptocore

import (
	"errors"
	"fmt"
	"testing"

	"gocryptfs/internal/stupidgcm"
)

// stupidgcm cannot name BatchError: its BlockError must satisfy it by its
// methods alone.
var _ BatchError = (*stupidgcm.BlockError)(nil)

// TestBatchContracts: the OpenSSL AEADs of NewAEAD are BatchAEADs (else
// contentenc would silently take the per-block path), and a failing block
// of their OpenBatch is found as a BatchError that names its index and
// unwraps to the cause.
func TestBatchContracts(t *testing.T) {
	if got := BackendOpenSSL.Available(); got != stupidgcm.Available {
		t.Errorf("BackendOpenSSL.Available() = %v, stupidgcm.Available = %v", got, stupidgcm.Available)
	}
	if !BackendGo.Available() || !BackendAuto.Available() {
		t.Error("the Go backend must always be available")
	}
	if !stupidgcm.Available {
		t.Skip("built without OpenSSL")
	}
	for _, c := range []ContentCipher{AESGCM, XChaCha20Poly1305} {
		a, _, err := NewAEAD(c, BackendOpenSSL, make([]byte, KeyLen))
		if err != nil {
			t.Fatal(err)
		}
		b, ok := a.(BatchAEAD)
		if !ok {
			t.Fatalf("%v: OpenSSL AEAD %T is no BatchAEAD", c, a)
		}
		const bs = 64
		nonces := make([]byte, 3*a.NonceSize())
		for i := range nonces {
			nonces[i] = byte(i + 1)
		}
		ct := b.SealBatch(nil, nonces, make([]byte, 3*bs), bs, 0, nil)
		ct[2*(a.NonceSize()+bs+TagLen)-1] ^= 1 // the tag of block 1
		_, err = b.OpenBatch(nil, ct, bs, 0, nil)
		var be BatchError
		if !errors.As(fmt.Errorf("wrapped: %w", err), &be) || be.BatchIndex() != 1 || !errors.Is(be.Unwrap(), stupidgcm.ErrAuth) {
			t.Errorf("%v: OpenBatch of a bad block 1: %v", c, err)
		}
	}
}
