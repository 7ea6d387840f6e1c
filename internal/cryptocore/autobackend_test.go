package cryptocore

import (
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"

	"gocryptfs/internal/stupidgcm"
)

// AutoBackend follows its documented rules, never picks OpenSSL when the
// build lacks it, and NewAEAD reports what BackendAuto resolved to.
func TestAutoBackend(t *testing.T) {
	openssl := func(cond bool) Backend {
		if cond && stupidgcm.Available {
			return BackendOpenSSL
		}
		return BackendGo
	}
	want := map[ContentCipher]Backend{
		AESGCM:            openssl(!HasAESGCMHardware()),
		AESSIV:            BackendGo,
		XChaCha20Poly1305: openssl(runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F),
	}
	for c, w := range want {
		if got := AutoBackend(c); got != w {
			t.Errorf("AutoBackend(%v) = %v, want %v", c, got, w)
		}
		keyLen := KeyLen
		if c == AESSIV {
			keyLen = 64
		}
		a, got, err := NewAEAD(c, BackendAuto, make([]byte, keyLen))
		if err != nil || a == nil || got != w {
			t.Errorf("NewAEAD(%v, auto) = %v, %v; want backend %v", c, got, err, w)
		}
	}
	t.Logf("this CPU: AES-GCM hardware %v, AVX-512F %v; OpenSSL compiled in: %v; auto: AES-GCM %v, XChaCha20-Poly1305 %v",
		HasAESGCMHardware(), cpu.X86.HasAVX512F, stupidgcm.Available, AutoBackend(AESGCM), AutoBackend(XChaCha20Poly1305))
}
