package nametransform

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// docs/format.md 6.3: encrypted name length as a function of the plaintext length.
func TestEncryptedLengthTable(t *testing.T) {
	table := []struct{ lo, hi, raw, padded int }{
		{1, 15, 22, 24}, {16, 31, 43, 44}, {32, 47, 64, 64}, {48, 63, 86, 88},
		{64, 79, 107, 108}, {80, 95, 128, 128}, {96, 111, 150, 152}, {112, 127, 171, 172},
		{128, 143, 192, 192}, {144, 159, 214, 216}, {160, 175, 235, 236}, {176, 191, 256, 256},
		{192, 207, 278, 280}, {208, 223, 299, 300}, {224, 239, 320, 320}, {240, 255, 342, 344},
	}
	raw := newNT(t, cryptocore.AESGCM, true, Options{Raw64: true})
	padded := newNT(t, cryptocore.AESGCM, true, Options{})
	iv := bytes.Repeat([]byte{1}, DirIVLen)
	for _, row := range table {
		for _, l := range []int{row.lo, (row.lo + row.hi) / 2, row.hi} {
			name := rep("z", l)
			r, err := raw.EncryptName(name, iv)
			if err != nil || len(r) != row.raw {
				t.Errorf("raw: L=%d → %d chars (%v), want %d", l, len(r), err, row.raw)
			}
			p, err := padded.EncryptName(name, iv)
			if err != nil || len(p) != row.padded {
				t.Errorf("padded: L=%d → %d chars (%v), want %d", l, len(p), err, row.padded)
			}
		}
	}
	for _, n := range []*NameTransform{raw, padded} {
		if _, err := n.EncryptName(rep("z", 256), iv); !errors.Is(err, ErrNameTooLong) || !errors.Is(err, syscall.ENAMETOOLONG) {
			t.Errorf("256-byte name: %v", err)
		}
	}
}

func TestInvalidPlainNames(t *testing.T) {
	modes := map[string]*NameTransform{
		"diriv":         newNT(t, cryptocore.AESGCM, true, defaultOpts),
		"deterministic": newNT(t, cryptocore.AESGCM, true, Options{DeterministicNames: true}),
		"plaintext":     newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true}),
	}
	iv := bytes.Repeat([]byte{1}, DirIVLen)
	cases := []struct {
		name  string
		errno error
	}{
		{"", syscall.EINVAL}, {".", syscall.EINVAL}, {"..", syscall.EINVAL},
		{"a/b", syscall.EINVAL}, {"a\x00b", syscall.EINVAL}, {"/", syscall.EINVAL},
		{rep("x", 256), syscall.ENAMETOOLONG},
	}
	for mode, n := range modes {
		for _, c := range cases {
			if _, err := n.EncryptName(c.name, iv); !errors.Is(err, c.errno) {
				t.Errorf("%s: EncryptName(%.10q) = %v, want %v", mode, c.name, err, c.errno)
			}
			if _, err := n.EncryptAndHashName(c.name, iv); !errors.Is(err, c.errno) {
				t.Errorf("%s: EncryptAndHashName(%.10q) = %v, want %v", mode, c.name, err, c.errno)
			}
		}
		for _, ok := range []string{"...", ".a", "a.", " ", "\xff\xfe", rep("x", 255)} {
			if _, err := n.EncryptName(ok, iv); err != nil {
				t.Errorf("%s: EncryptName(%.10q): %v", mode, ok, err)
			}
		}
	}
	// Wrong IV length is a caller bug, not a bad name.
	n := modes["diriv"]
	for _, bad := range [][]byte{nil, make([]byte, 15), make([]byte, 17)} {
		if _, err := n.EncryptName("a", bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("IV of %d bytes: %v", len(bad), err)
		}
		if _, err := n.DecryptName("RstaWk5xuBGCq94EGMhOoQ", bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("IV of %d bytes: %v", len(bad), err)
		}
	}
}

// Names that must never decrypt (docs/format.md 6.2, 6.3, 6.7).
func TestDecryptNameRejects(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	iv := testutil.MustHex(t, testutil.TV4RootIV)
	const good = "90mGAqBQtvpoJD1knzTcOQ" // hello.txt
	// A name whose EME plaintext has bad padding: encrypt raw blocks.
	encRaw := func(p []byte) string { return n.B64().EncodeToString(n.cc.EME.Encrypt(iv, p)) }
	padOK := pad16(nil, "abc")
	badPad1 := bytes.Clone(padOK)
	badPad1[15] = 0 // k = 0
	badPad2 := bytes.Clone(padOK)
	badPad2[15] = 17                        // k > 16
	badPad3 := bytes.Repeat([]byte{16}, 16) // k == total length: empty name
	badPad4 := bytes.Clone(padOK)
	badPad4[10] = 12 // inconsistent padding bytes
	cases := map[string]string{
		"empty":            "",
		"padded form":      good + "==",
		"CR":               good[:10] + "\r" + good[10:],
		"LF":               good[:10] + "\n" + good[10:],
		"trailing LF":      good + "\n",
		"std alphabet":     strings.ReplaceAll("QXTID-HZjKZtmt-8c6B3P2GfjH-WpXzlU0pc3L5kyAw", "-", "+"),
		"non-canonical":    good[:21] + "R", // last char carries non-zero unused bits
		"15 bytes":         n.B64().EncodeToString(make([]byte, 15)),
		"17 bytes":         n.B64().EncodeToString(make([]byte, 17)),
		"272 bytes":        n.B64().EncodeToString(make([]byte, 272)),
		"too long":         rep("A", 343),
		"dot":              "gocryptfs.diriv",
		"k=0":              encRaw(badPad1),
		"k=17":             encRaw(badPad2),
		"k=len":            encRaw(badPad3),
		"bad pad bytes":    encRaw(badPad4),
		"slash":            encRaw(pad16(nil, "a/b")),
		"NUL":              encRaw(pad16(nil, "a\x00b")),
		"dot name":         encRaw(pad16(nil, ".")),
		"dotdot name":      encRaw(pad16(nil, "..")),
		"256-byte name":    encRaw(append(bytes.Repeat([]byte{'a'}, 256), bytes.Repeat([]byte{16}, 16)...)),
		"wrong dir IV":     "Ot_tHIia9GkSdsBCTPVTug", // file.txt in dir1
		"long name itself": "gocryptfs.longname.kpExm8WevxFUECPfrhxzrpp4WX7ZlpSto-IuSotXA14",
	}
	for what, c := range cases {
		if got, err := n.DecryptName(c, iv); !errors.Is(err, ErrBadName) {
			t.Errorf("%s: DecryptName(%.30q) = %q, %v; want ErrBadName", what, c, got, err)
		}
	}
	if got, err := n.DecryptName(good, iv); err != nil || got != "hello.txt" {
		t.Fatalf("control: %q, %v", got, err)
	}
	// Padded mode rejects missing padding.
	p := newNT(t, cryptocore.AESGCM, true, Options{})
	enc, _ := p.EncryptName("hello.txt", iv)
	if _, err := p.DecryptName(strings.TrimRight(enc, "="), iv); !errors.Is(err, ErrBadName) {
		t.Errorf("padded mode accepted a name without padding: %v", err)
	}
	// PlaintextNames: only invalid names are rejected.
	pt := newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true})
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00"} {
		if _, err := pt.DecryptName(bad, nil); !errors.Is(err, ErrBadName) {
			t.Errorf("plaintext mode accepted %q: %v", bad, err)
		}
	}
}

// Round trips in every naming mode and at every hashing threshold.
func TestRoundTrips(t *testing.T) {
	type mode struct {
		name string
		opts Options
		hkdf bool
	}
	modes := []mode{
		{"diriv raw64", Options{Raw64: true}, true},
		{"diriv padded", Options{}, true},
		{"legacy padded", Options{}, false},
		{"deterministic raw64", Options{Raw64: true, DeterministicNames: true}, true},
		{"deterministic padded", Options{DeterministicNames: true}, true},
		{"plaintextnames", Options{PlaintextNames: true}, true},
	}
	for max := 62; max <= 255; max += 17 {
		modes = append(modes, mode{"longnamemax", Options{Raw64: true, LongNameMax: max}, true})
	}
	modes = append(modes, mode{"longnamemax 255", Options{Raw64: true, LongNameMax: 255}, true})
	names := []string{"a", "hello.txt", "\xc3\xa4", "with space", "\x01\x7f\xff", "0123456789abcdef", "...", " GOCRYPTFS_BAD_NAME"}
	for l := 1; l <= NameMax; l += 7 {
		names = append(names, rep("q", l))
	}
	names = append(names, rep("r", 255), rep("s", 175), rep("t", 176))
	for _, m := range modes {
		n := newNT(t, cryptocore.AESGCM, m.hkdf, m.opts)
		iv := cryptocore.RandBytes(DirIVLen)
		for _, name := range names {
			enc, err := n.EncryptName(name, iv)
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			stored, long := n.HashIfLong(enc)
			wantLong := !m.opts.PlaintextNames && len(enc) > n.LongNameMax()
			if long != wantLong || (long && stored != n.HashLongName(enc)) || (!long && stored != enc) {
				t.Errorf("%s: %.10q×%d: long=%v stored=%s", m.name, name, len(name), long, stored)
			}
			if long && len(stored) != len(LongNamePrefix)+n.B64().EncodedLen(32) {
				t.Errorf("%s: hashed name %s has the wrong length", m.name, stored)
			}
			dec, err := n.DecryptName(enc, iv)
			if err != nil || dec != name {
				t.Errorf("%s: %.10q×%d round trip: %q, %v", m.name, name, len(name), dec, err)
			}
		}
	}
}

// Tampering with any single character of an encrypted name must never give
// back the original name. EME is not authenticated: a modified ciphertext
// decrypts to a random-looking plaintext, which is rejected unless it
// happens to end in valid padding (last byte 0x01: probability ~1/256) and
// contains no '/' or NUL. So a small fraction decodes to a different, valid,
// garbage name; the test logs how many.
func TestTamperedNames(t *testing.T) {
	for _, raw64 := range []bool{true, false} {
		n := newNT(t, cryptocore.AESGCM, true, Options{Raw64: raw64})
		iv := testutil.MustHex(t, testutil.TV4RootIV)
		alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="
		tried, rejected, accepted := 0, 0, 0
		perName := map[int]int{}
		for _, name := range []string{"a", "hello.txt", "0123456789abcdef", rep("N", 100), rep("M", 175), rep("O", 255)} {
			enc, err := n.EncryptName(name, iv)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(enc); i++ {
				for j := 0; j < len(alphabet); j++ {
					if alphabet[j] == enc[i] {
						continue
					}
					mod := enc[:i] + alphabet[j:j+1] + enc[i+1:]
					tried++
					dec, err := n.DecryptName(mod, iv)
					if err != nil {
						if !errors.Is(err, ErrBadName) {
							t.Fatalf("unexpected error kind: %v", err)
						}
						rejected++
						continue
					}
					if dec == name {
						t.Fatalf("tampered %s decrypts to the original name", mod)
					}
					accepted++
					perName[len(name)]++
				}
			}
		}
		t.Logf("raw64=%v: %d single-character substitutions, %d rejected, %d decoded to a different valid name (by plaintext length: %v)", raw64, tried, rejected, accepted, perName)
	}
}

// Symlink targets and xattr values are authenticated: every single-byte
// change must be rejected.
func TestTamperedAEAD(t *testing.T) {
	for _, c := range []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305} {
		n := newNT(t, c, true, defaultOpts)
		stored, err := n.EncryptSymlinkTarget("../some/target")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := n.B64().DecodeString(stored)
		for i := range raw {
			for _, bit := range []byte{1, 0x80} {
				mod := bytes.Clone(raw)
				mod[i] ^= bit
				if got, err := n.DecryptSymlinkTarget(n.B64().EncodeToString(mod)); !errors.Is(err, ErrBadSymlinkTarget) || !errors.Is(err, syscall.EIO) {
					t.Fatalf("%v: symlink byte %d flipped: %q, %v", c, i, got, err)
				}
			}
		}
		for _, cut := range []int{1, len(raw) - 1} {
			if _, err := n.DecryptSymlinkTarget(n.B64().EncodeToString(raw[:cut])); !errors.Is(err, ErrBadSymlinkTarget) {
				t.Fatalf("%v: truncated symlink accepted: %v", c, err)
			}
		}
		if _, err := n.DecryptSymlinkTarget("!!!"); !errors.Is(err, ErrBadSymlinkTarget) {
			t.Fatalf("invalid base64 symlink: %v", err)
		}
		if _, err := n.DecryptSymlinkTarget(stored[:10] + "\n" + stored[10:]); !errors.Is(err, ErrBadSymlinkTarget) {
			t.Fatalf("symlink with LF: %v", err)
		}
		val := n.EncryptXattrValue([]byte("some value"))
		for i := range val {
			mod := bytes.Clone(val)
			mod[i] ^= 4
			if got, err := n.DecryptXattrValue(mod); !errors.Is(err, ErrBadXattrValue) || !errors.Is(err, syscall.EIO) {
				t.Fatalf("%v: xattr byte %d flipped: %q, %v", c, i, got, err)
			}
		}
		if v, err := n.DecryptXattrValue(val); err != nil || string(v) != "some value" {
			t.Fatalf("%v: xattr round trip %q, %v", c, v, err)
		}
	}
}

func TestSymlinkRoundTrip(t *testing.T) {
	targets := []string{"a", "hello.txt", "/", "../../x/y", "\xff\x01", rep("p", 3000)}
	for _, c := range []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV, cryptocore.XChaCha20Poly1305} {
		for _, opts := range []Options{defaultOpts, {}, {DeterministicNames: true}} {
			n := newNT(t, c, true, opts)
			for _, target := range targets {
				s, err := n.EncryptSymlinkTarget(target)
				if err != nil {
					t.Fatal(err)
				}
				if want := n.B64().EncodedLen(c.NonceSize() + len(target) + 16); len(s) != want {
					t.Errorf("%v: stored length %d, want %d", c, len(s), want)
				}
				if d, err := n.DecryptSymlinkTarget(s); err != nil || d != target {
					t.Errorf("%v: %.10q round trip: %.10q, %v", c, target, d, err)
				}
			}
			if s, err := n.EncryptSymlinkTarget(""); err != nil || s != "" {
				t.Errorf("empty target → %q, %v", s, err)
			}
			if d, err := n.DecryptSymlinkTarget(""); err != nil || d != "" {
				t.Errorf("empty stored → %q, %v", d, err)
			}
			if _, err := n.EncryptSymlinkTarget(rep("p", 4000)); !errors.Is(err, syscall.ENAMETOOLONG) {
				t.Errorf("oversized target: %v", err)
			}
			if _, err := n.EncryptSymlinkTargetNonce("x", make([]byte, 3)); !errors.Is(err, ErrBadArgument) {
				t.Errorf("short nonce: %v", err)
			}
		}
	}
}

func TestXattrNames(t *testing.T) {
	for _, opts := range []Options{defaultOpts, {}, {PlaintextNames: true}} {
		n := newNT(t, cryptocore.AESGCM, true, opts)
		for _, name := range []string{"user.a", "trusted.x", "security.capability", "user./slash/ok", rep("u", 255), rep("v", 2047)} {
			s, err := n.EncryptXattrName(name)
			if err != nil || !strings.HasPrefix(s, XattrPrefix) {
				t.Fatalf("EncryptXattrName(%.10s): %s, %v", name, s, err)
			}
			if d, err := n.DecryptXattrName(s); err != nil || d != name {
				t.Errorf("round trip %.10s: %.10s, %v", name, d, err)
			}
		}
		for _, bad := range []string{"", "user.a\x00b"} {
			if _, err := n.EncryptXattrName(bad); !errors.Is(err, ErrInvalidName) {
				t.Errorf("EncryptXattrName(%q): %v", bad, err)
			}
		}
		if _, err := n.EncryptXattrName(rep("v", 2048)); !errors.Is(err, ErrNameTooLong) {
			t.Errorf("oversized xattr name: %v", err)
		}
		// Backing names the mount does not show.
		for _, hidden := range []string{"user.direct", "security.selinux", "user.gocryptfsX"} {
			if _, err := n.DecryptXattrName(hidden); !errors.Is(err, ErrHiddenXattr) {
				t.Errorf("DecryptXattrName(%s): %v", hidden, err)
			}
		}
		// An encrypted ACL name is a legacy artefact.
		encACL := XattrPrefix + n.B64().EncodeToString(n.cc.EME.Encrypt(n.xattrTweak[:], pad16(nil, ACLAccess)))
		if _, err := n.DecryptXattrName(encACL); !errors.Is(err, ErrHiddenXattr) {
			t.Errorf("encrypted ACL name: %v", err)
		}
		for _, bad := range []string{XattrPrefix, XattrPrefix + "!!", XattrPrefix + "AAAA", XattrPrefix + "90mGAqBQtvpoJD1knzTcOQ\n"} {
			if _, err := n.DecryptXattrName(bad); !errors.Is(err, ErrBadName) {
				t.Errorf("DecryptXattrName(%q): %v", bad, err)
			}
		}
		if !IsACLName(ACLAccess) || !IsACLName(ACLDefault) || IsACLName("system.posix_acl") {
			t.Error("IsACLName")
		}
	}
}

func TestClassify(t *testing.T) {
	diriv := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	det := newNT(t, cryptocore.AESGCM, true, Options{DeterministicNames: true})
	pt := newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true})
	const h = "gocryptfs.longname.kpExm8WevxFUECPfrhxzrpp4WX7ZlpSto-IuSotXA14"
	cases := []struct {
		n      *NameTransform
		name   string
		isRoot bool
		want   Kind
	}{
		{diriv, ConfDefaultName, true, KindConfig},
		{diriv, ConfDefaultName, false, KindName},
		{diriv, DirIVFilename, false, KindDirIV},
		{diriv, DirIVFilename, true, KindDirIV},
		{diriv, h, false, KindLongName},
		{diriv, h + LongNameSuffix, false, KindLongNameFile},
		{diriv, "RstaWk5xuBGCq94EGMhOoQ", true, KindName},
		{diriv, ".", true, KindDot},
		{diriv, "..", false, KindDot},
		{det, DirIVFilename, false, KindName},
		{det, ConfDefaultName, true, KindConfig},
		{det, h + LongNameSuffix, true, KindLongNameFile},
		{pt, ConfDefaultName, true, KindConfig},
		{pt, ConfDefaultName, false, KindName},
		{pt, DirIVFilename, true, KindName},
		{pt, h, true, KindName},
		{pt, h + LongNameSuffix, true, KindName},
		{diriv, QuarantineDirName, true, KindQuarantine},
		{diriv, QuarantineDirName, false, KindName},
		{det, QuarantineDirName, true, KindQuarantine},
		{pt, QuarantineDirName, true, KindQuarantine},
		{pt, QuarantineDirName, false, KindName},
	}
	for _, c := range cases {
		if got := c.n.Classify(c.name, c.isRoot); got != c.want {
			t.Errorf("Classify(%s, root=%v) = %v, want %v", c.name, c.isRoot, got, c.want)
		}
		if got := c.n.IsHiddenInListing(c.name, c.isRoot); got != c.want.Hidden() {
			t.Errorf("IsHiddenInListing(%s, root=%v) = %v", c.name, c.isRoot, got)
		}
	}
	if diriv.IsReservedName(ConfDefaultName, true) || diriv.IsReservedName(QuarantineDirName, true) {
		t.Error("encrypted names reserve nothing")
	}
	if !pt.IsReservedName(QuarantineDirName, true) || pt.IsReservedName(QuarantineDirName, false) {
		t.Error("plaintext names reserve gocryptfs.quarantine in the root only")
	}
	if !diriv.UsesDirIV() || det.UsesDirIV() || pt.UsesDirIV() {
		t.Error("UsesDirIV")
	}
}

func TestNewValidation(t *testing.T) {
	cc := newCC(t, cryptocore.AESGCM, true)
	for _, max := range []int{1, 61, 256, -1} {
		if _, err := New(cc, Options{LongNameMax: max}); err == nil {
			t.Errorf("LongNameMax %d accepted", max)
		}
	}
	for _, max := range []int{0, 62, 100, 255} {
		if _, err := New(cc, Options{LongNameMax: max}); err != nil {
			t.Errorf("LongNameMax %d: %v", max, err)
		}
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil CryptoCore accepted")
	}
	for _, p := range []string{"[", "a[", "\\"} {
		if _, err := New(cc, Options{BadnamePatterns: []string{"*", p}}); err == nil {
			t.Errorf("pattern %q accepted", p)
		}
	}
}

func TestErrorsMatchErrnos(t *testing.T) {
	for _, c := range []struct {
		err   error
		errno syscall.Errno
	}{
		{ErrInvalidName, syscall.EINVAL}, {ErrNameTooLong, syscall.ENAMETOOLONG},
		{ErrBadDirIV, syscall.EIO}, {ErrBadLongNameFile, syscall.EIO},
		{ErrBadSymlinkTarget, syscall.EIO}, {ErrBadXattrValue, syscall.EIO},
		{ErrBadArgument, syscall.EINVAL},
	} {
		if !errors.Is(c.err, c.errno) {
			t.Errorf("%v does not match %v", c.err, c.errno)
		}
	}
	var errno syscall.Errno
	if errors.As(ErrBadName, &errno) || errors.As(ErrHiddenXattr, &errno) {
		t.Error("ErrBadName/ErrHiddenXattr must not carry an errno")
	}
}

func TestPathIVShape(t *testing.T) {
	a := PathIV("x", PurposeDirIV)
	if len(a) != 16 || bytes.Equal(a, PathIV("x", PurposeFileID)) || bytes.Equal(a, PathIV("y", PurposeDirIV)) {
		t.Error("PathIV must depend on path and purpose")
	}
	// The 0x00 separator keeps (path, purpose) pairs apart.
	if bytes.Equal(PathIV("aD", "IRIV"), PathIV("a", PurposeDirIV)) {
		t.Error("separator missing")
	}
	if !bytes.Equal(ReverseXattrNonce("", "user.gocryptfs.x"), PathIV("\x00user.gocryptfs.x", PurposeXattrIV)) {
		t.Error("ReverseXattrNonce for the root")
	}
	if !bytes.Equal(ReverseSymlinkNonce("D/X"), PathIV("D/X/X", PurposeSymlinkIV)) {
		t.Error("ReverseSymlinkNonce doubled component")
	}
}
