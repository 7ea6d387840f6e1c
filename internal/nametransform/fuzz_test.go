package nametransform

import (
	"bytes"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// FuzzDecryptName feeds arbitrary names and IVs to DecryptName (and the
// xattr-name and -badname paths that share its decoder). It must never
// panic, and anything it accepts must re-encrypt to exactly the same string.
func FuzzDecryptName(f *testing.F) {
	modes := []*NameTransform{
		newNT(f, cryptocore.AESGCM, true, Options{Raw64: true, BadnamePatterns: []string{"*"}}),
		newNT(f, cryptocore.AESGCM, true, Options{BadnamePatterns: []string{"*"}}),
		newNT(f, cryptocore.AESGCM, true, Options{Raw64: true, DeterministicNames: true, BadnamePatterns: []string{"*"}}),
		newNT(f, cryptocore.AESGCM, true, Options{PlaintextNames: true}),
	}
	root := testutil.MustHex(f, testutil.TV4RootIV)
	for _, s := range []string{"RstaWk5xuBGCq94EGMhOoQ", "QXTID-HZjKZtmt-8c6B3P2GfjH-WpXzlU0pc3L5kyAw", "edWywPVDW64JaD6kSy94IA",
		"G5_RbG3f4_yQPjG1PHtL0w==", "RstaWk5xuBGCq94EGMhOoQ (conflicted copy)", "", ".", "..", "a/b", "gocryptfs.diriv", "49MtW6o4r3wu_Jt77wclOA"} {
		for m := range modes {
			f.Add(s, root, byte(m))
		}
	}
	f.Fuzz(func(t *testing.T, s string, iv []byte, mode byte) {
		n := modes[int(mode)%len(modes)]
		iv16 := make([]byte, DirIVLen)
		copy(iv16, iv)
		if plain, err := n.DecryptName(s, iv16); err == nil {
			again, err := n.EncryptName(plain, iv16)
			if err != nil || again != s {
				t.Fatalf("%q decrypts to %q, which encrypts to %q (%v)", s, plain, again, err)
			}
		}
		if name, err := n.DecryptXattrName(XattrPrefix + s); err == nil {
			again, err := n.EncryptXattrName(name)
			if err != nil || again != XattrPrefix+s {
				t.Fatalf("xattr %q decrypts to %q, which encrypts to %q (%v)", s, name, again, err)
			}
		}
		if mode&4 != 0 && len(s) <= 300 {
			if shown, ok := n.displayBadName(s, iv16); ok {
				found := s == shown
				for _, c := range n.BadNameCandidates(shown, iv16) {
					found = found || c == s
				}
				if !found && len(s) <= NameMax {
					t.Fatalf("%q is shown as %q, whose candidates do not include it", s, shown)
				}
			}
		}
	})
}

// FuzzDecryptSymlinkTarget feeds arbitrary stored targets (and xattr
// values) to the AEAD decoders: no panics, and whatever authenticates must
// re-encrypt to the same bytes with the stored nonce.
func FuzzDecryptSymlinkTarget(f *testing.F) {
	var modes []*NameTransform
	for _, c := range []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305} {
		modes = append(modes, newNT(f, c, true, Options{Raw64: true}), newNT(f, c, true, Options{}))
	}
	for _, s := range []string{"MEnbl6pGKujQ2_GK7Vw1AjtSm7alddmUa1zhrZJ4IoGuBRxbeaxejH0", "", "AAAA", "hello.txt"} {
		for m := range modes {
			f.Add(s, byte(m))
		}
	}
	for m, n := range modes {
		s, _ := n.EncryptSymlinkTarget("../target")
		f.Add(s, byte(m))
		f.Add(string(n.EncryptXattrValue([]byte("value"))), byte(m))
	}
	f.Fuzz(func(t *testing.T, s string, mode byte) {
		n := modes[int(mode)%len(modes)]
		ns := n.cc.AEAD.NonceSize()
		if target, err := n.DecryptSymlinkTarget(s); err == nil && s != "" {
			raw, derr := n.B64().DecodeString(s)
			if derr != nil {
				t.Fatalf("accepted %q that does not decode: %v", s, derr)
			}
			again, err := n.EncryptSymlinkTargetNonce(target, raw[:ns])
			if err != nil || again != s {
				t.Fatalf("%q → %q → %q (%v)", s, target, again, err)
			}
		}
		stored := []byte(s)
		if v, err := n.DecryptXattrValue(stored); err == nil && len(stored) > 0 {
			if !bytes.Equal(stored, []byte(s)) {
				t.Fatal("DecryptXattrValue modified its input")
			}
			raw := stored
			if len(raw) < ns {
				t.Fatalf("accepted a %d-byte value", len(raw))
			}
			again, _ := n.EncryptXattrValueNonce(v, raw[:ns])
			if !bytes.Equal(again, raw) {
				legacy, derr := n.B64().DecodeString(s)
				if derr != nil || len(legacy) < ns {
					t.Fatalf("value %x accepted but does not re-encrypt", stored)
				}
				again, _ = n.EncryptXattrValueNonce(v, legacy[:ns])
				if !bytes.Equal(again, legacy) {
					t.Fatalf("legacy value %q accepted but does not re-encrypt", s)
				}
			}
		}
	})
}
