package nametransform

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// nameVector is one plaintext name and its stored (possibly hashed) form.
type nameVector struct {
	plain, stored string
}

// checkNames encrypts and decrypts every vector in a directory with IV iv.
func checkNames(t *testing.T, n *NameTransform, iv []byte, vecs []nameVector) {
	t.Helper()
	for _, v := range vecs {
		got, err := n.EncryptAndHashName(v.plain, iv)
		if err != nil {
			t.Errorf("EncryptAndHashName(%.20q): %v", v.plain, err)
			continue
		}
		if got != v.stored {
			t.Errorf("EncryptAndHashName(%.20q) = %s, want %s", v.plain, got, v.stored)
		}
		if IsLongContent(v.stored) {
			continue // decrypting needs the .name content; see the long-name tests
		}
		dec, err := n.DecryptName(v.stored, iv)
		if err != nil || dec != v.plain {
			t.Errorf("DecryptName(%s) = %.20q, %v; want %.20q", v.stored, dec, err, v.plain)
		}
	}
}

// TV-4: default filesystem, root and dir1.
func TestTV4Names(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	checkNames(t, n, testutil.MustHex(t, testutil.TV4RootIV), []nameVector{
		{"a", "RstaWk5xuBGCq94EGMhOoQ"},
		{"hello.txt", "90mGAqBQtvpoJD1knzTcOQ"},
		{"one", "9qbLEG9E2vaGoZpQRQAhGg"},
		{"empty", "EUt92QTyRMWc6KV0lP1dmA"},
		{"f4095", "riS7kCseRbWnV4_PpZ5Diw"},
		{"f4096", "b3COlBZeGnFDzhi2jMLK2Q"},
		{"f4097", "KSJFHtZOhA9Efy2WxKpsWg"},
		{"link1", "BIL3ebOUPRTMYsAW68Tisw"},
		{"dir1", "AcJVqps12xZ4feukhiQfOw"},
		{"0123456789abcdef", "QXTID-HZjKZtmt-8c6B3P2GfjH-WpXzlU0pc3L5kyAw"},
		{"gocryptfs.conf", "8kQxBbBuP_0dmtfV1-LJCA"},
		{"gocryptfs.diriv", "lEF57kYeOdExBRngv4DdJA"},
		{"\xc3\xa4", "m00-1iq5NTMMTS_LOshyEg"},
	})
	checkNames(t, n, testutil.MustHex(t, testutil.TV4Dir1IV), []nameVector{
		{"file.txt", "Ot_tHIia9GkSdsBCTPVTug"},
		{"x", "lhjquxQCkzoTjInusT0-iw"},
		{"link2", "3pSl5kgxYYsKNPoSjg7zdQ"},
	})

	// N×175: 235 characters, stored directly.
	n175 := rep("N", 175)
	enc, err := n.EncryptName(n175, testutil.MustHex(t, testutil.TV4RootIV))
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != 235 || !strings.HasPrefix(enc, "In-otUsvpCjB1g3sfW5XnDArjlF4") || !strings.HasSuffix(enc, "MbW8") {
		t.Errorf("N×175 → %s (%d chars)", enc, len(enc))
	}
	if stored, long := n.HashIfLong(enc); long || stored != enc {
		t.Errorf("N×175 must be stored directly, got %s", stored)
	}
	if dec, err := n.DecryptName(enc, testutil.MustHex(t, testutil.TV4RootIV)); err != nil || dec != n175 {
		t.Errorf("N×175 does not decrypt back: %v", err)
	}
}

// TV-4 low-level check: padding, raw EME output and the 16-byte name.
func TestTV4LowLevel(t *testing.T) {
	if got := hex.EncodeToString(pad16(nil, "hello.txt")); got != "68656c6c6f2e74787407070707070707" {
		t.Errorf("pad16(hello.txt) = %s", got)
	}
	cc := newCC(t, cryptocore.AESGCM, true)
	p := pad16(nil, "hello.txt")
	if got := hex.EncodeToString(cc.EME.Encrypt(testutil.MustHex(t, testutil.TV4RootIV), p)); got != "f7498602a050b6fa68243d649f34dc39" {
		t.Errorf("EME(hello.txt) = %s", got)
	}
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	raw, err := n.B64().DecodeString("QXTID-HZjKZtmt-8c6B3P2GfjH-WpXzlU0pc3L5kyAw")
	if err != nil || hex.EncodeToString(raw) != "4174c80fe1d98ca66d9adfbc73a0773f619f8c7f96a57ce5534a5cdcbe64c80c" {
		t.Errorf("16-byte name decodes to %x, %v", raw, err)
	}
}

// TV-5: deterministic names, including multi-component paths.
func TestTV5Deterministic(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, Options{Raw64: true, DeterministicNames: true})
	paths := []nameVector{
		{"a", "edWywPVDW64JaD6kSy94IA"},
		{"hello.txt", "RrwS8IAaz6hzzVrL-nQPwg"},
		{"one", "UUPw7R_thDekj9B1182RmA"},
		{"link1", "jLbHK2GtDqHl-8IEvmrQSg"},
		{"dir1", "o-a2b6nnZg29G5uE5NHk0A"},
		{"dir1/file.txt", "o-a2b6nnZg29G5uE5NHk0A/FEmJc2sTGFl2tnqXVjjC3g"},
		{"dir1/sub/hello.txt", "o-a2b6nnZg29G5uE5NHk0A/F3tyDQFBJtlUXm3YdOGx3A/RrwS8IAaz6hzzVrL-nQPwg"},
		{"0123456789abcdef", "hKFw_slBg4_aH6DjRgbjQIbWqiNcwdD2QPgWcsTEcA0"},
		{"\xc3\xa4", "EBIWdaQ1K1wSxolSirmngQ"},
		{"gocryptfs.conf", "fsO9JFEiNL1SceNEvFseYQ"},
		{rep("L", 176), "gocryptfs.longname.t2BFOFLa29YqO5fe2wDLY9WFTvuTN0dXKtvmKbH-kv0"},
		{rep("L", 255), "gocryptfs.longname.Y2r1YTuVQxowyhk5sJjnPl61_3jLyF5JboMOVa549-E"},
		{rep("P", 40), "0xmGz3HqV-dWSdvEMT7MgNGc4MjSdROZ7skBOf0HrxFMpxeZTruEq9PMy1Lkz7X2"},
	}
	for _, v := range paths {
		pc := strings.Split(v.plain, "/")
		cc := strings.Split(v.stored, "/")
		if len(pc) != len(cc) {
			t.Fatalf("bad vector %q", v.plain)
		}
		for i := range pc {
			// Any IV (even nil or a wrong one) is ignored with deterministic names.
			iv := []byte(nil)
			if i%2 == 1 {
				iv = testutil.MustHex(t, testutil.TV4RootIV)
			}
			checkNames(t, n, iv, []nameVector{{pc[i], cc[i]}})
		}
	}
}

// TV-6: long names in the default filesystem.
func TestTV6LongNames(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	iv := testutil.MustHex(t, testutil.TV4RootIV)
	const n176Enc = "dgDRb5wuYLnuVtKoyUxu9fnwlm0T95z8c2bPnCw31KT9WN4fB-A7NwhKaJ0mVr8XOazXoN392wm0QHG8nSQDLbmql2CUP3H32EwU4kKKwn03Tr3iUVw97OugS7WSU1FJ4xCzghijBA3b7oaDwGsCZUcyfvb9wRCKOsq8VS9fLVE_tQcSqoXkxe2qYZmvLL99G1HoESiVgSqgI9u64alc_dTVr9AU4NThjQS9LEptMouYeT2v6mmD77kZiks7fnE2"
	cases := []struct {
		plain, hashed string
		encLen        int
		enc           string
	}{
		{rep("N", 176), "gocryptfs.longname.kpExm8WevxFUECPfrhxzrpp4WX7ZlpSto-IuSotXA14", 256, n176Enc},
		{rep("L", 255), "gocryptfs.longname.1EGhxgNZ4z7dATY32jzCjZiukZJfJaKdMtDvQ1jRCsE", 342, ""},
		{rep("M", 180), "gocryptfs.longname.k-wU1Ruf_OH_4QH6dVFsZY7f5JnzuXNpeM9iGYB4Yrc", 256, ""},
	}
	for _, c := range cases {
		enc, err := n.EncryptName(c.plain, iv)
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) != c.encLen || (c.enc != "" && enc != c.enc) {
			t.Errorf("%.8q×%d: enc %s (%d chars)", c.plain, len(c.plain), enc, len(enc))
		}
		stored, long := n.HashIfLong(enc)
		if !long || stored != c.hashed || n.HashLongName(enc) != c.hashed {
			t.Errorf("%.8q×%d: stored %s, want %s", c.plain, len(c.plain), stored, c.hashed)
		}
		if !IsLongContent(stored) || IsLongNameFile(stored) || !IsLongNameFile(LongNameFilename(stored)) {
			t.Errorf("classification of %s", stored)
		}
		if dec, err := n.DecryptName(enc, iv); err != nil || dec != c.plain {
			t.Errorf("decrypting the .name content of %s: %v", c.hashed, err)
		}
	}
}

// TV-9 (GCM), TV-10 (XChaCha20-Poly1305, AES-SIV) and TV-11 (legacy GCM)
// symlink targets: decrypt, then re-encrypt with the stored nonce and
// compare byte for byte.
func TestSymlinkVectors(t *testing.T) {
	cases := []struct {
		name   string
		cipher cryptocore.ContentCipher
		hkdf   bool
		raw64  bool
		stored string
		target string
		rawLen int
	}{
		{"TV-9 link1", cryptocore.AESGCM, true, true, "MEnbl6pGKujQ2_GK7Vw1AjtSm7alddmUa1zhrZJ4IoGuBRxbeaxejH0", "hello.txt", 41},
		{"TV-9 dir1/link2", cryptocore.AESGCM, true, true, "6WmUtIjfPzvJGYAcNYwubCjLBdOclS2x8iMlgL49vgXHPGljkw4jGVrpjsz6LVTkf6Pf6F4", "/some/absolute/target", 53},
		{"TV-10 xchacha", cryptocore.XChaCha20Poly1305, true, true, "g_kDS32krJYgH3C-iSMRBNqjPzA6KvzM8ZvRHz3n04h8KhOaoJT9ChEBec3UbW7iWw", "hello.txt", 49},
		{"TV-10 aessiv", cryptocore.AESSIV, true, true, "vXF8mmBqix8f7-XWlhKFHDUMFDzmqn7r8wIswRXtgbtWnoV82_005eo", "hello.txt", 41},
		{"TV-11 legacy", cryptocore.AESGCM, false, false, "HxdgIWRjh1bDU6wGJ9O8gzSuqfj5iT2VbE-kVNjEHWGPcN0ChV92KkE=", "hello.txt", 41},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newNT(t, c.cipher, c.hkdf, Options{Raw64: c.raw64})
			got, err := n.DecryptSymlinkTarget(c.stored)
			if err != nil || got != c.target {
				t.Fatalf("DecryptSymlinkTarget = %q, %v; want %q", got, err, c.target)
			}
			raw, _ := n.B64().DecodeString(c.stored)
			if len(raw) != c.rawLen {
				t.Errorf("decoded length %d, want %d", len(raw), c.rawLen)
			}
			again, err := n.EncryptSymlinkTargetNonce(c.target, raw[:n.cc.AEAD.NonceSize()])
			if err != nil || again != c.stored {
				t.Errorf("re-encryption = %s, %v", again, err)
			}
			fresh, err := n.EncryptSymlinkTarget(c.target)
			if err != nil || len(fresh) != len(c.stored) || fresh == c.stored {
				t.Errorf("fresh encryption %s (%v): want same length, different bytes", fresh, err)
			}
		})
	}
}

// TV-9, TV-11, TV-12: xattr names.
func TestXattrNameVectors(t *testing.T) {
	hkdfRaw := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	legacy := newNT(t, cryptocore.AESGCM, false, Options{})
	plainNames := newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true})
	cases := []struct {
		n            *NameTransform
		plain, store string
	}{
		{hkdfRaw, "user.foo", "user.gocryptfs.49MtW6o4r3wu_Jt77wclOA"},
		{hkdfRaw, "user.empty", "user.gocryptfs.yMp1pNVxgsn8S3eZhz1YtQ"},
		{hkdfRaw, "trusted.foo", "user.gocryptfs.jLHfZHVUH9cYVEVrdl6CNA"},
		{hkdfRaw, "security.bar", "user.gocryptfs.BlsuW6_0ylATODRogaRBeg"},
		{legacy, "user.foo", "user.gocryptfs.JuBLpKKDpN-e4M9FnWb_qQ=="},
		{plainNames, "user.foo", "user.gocryptfs.49MtW6o4r3wu_Jt77wclOA=="},
		{hkdfRaw, ACLAccess, ACLAccess},
		{plainNames, ACLDefault, ACLDefault},
	}
	for _, c := range cases {
		got, err := c.n.EncryptXattrName(c.plain)
		if err != nil || got != c.store {
			t.Errorf("EncryptXattrName(%s) = %s, %v; want %s", c.plain, got, err, c.store)
		}
		dec, err := c.n.DecryptXattrName(c.store)
		if err != nil || dec != c.plain {
			t.Errorf("DecryptXattrName(%s) = %s, %v", c.store, dec, err)
		}
	}
	// Raw EME output for user.foo (TV-9).
	cc := newCC(t, cryptocore.AESGCM, true)
	if got := hex.EncodeToString(cc.EME.Encrypt([]byte(XattrNameTweak), pad16(nil, "user.foo"))); got != "e3d32d5baa38af7c2efc9b7bef072538" {
		t.Errorf("raw EME(user.foo) = %s", got)
	}
}

// TV-9 and TV-10: xattr values.
func TestXattrValueVectors(t *testing.T) {
	cases := []struct {
		name   string
		cipher cryptocore.ContentCipher
		stored string
	}{
		{"TV-9 GCM", cryptocore.AESGCM, "9d1ae206b8a81a808c33697a42fadd54" + "284f81" + "ced821f7849a24f45cb4f5e4fdcf6266"},
		{"TV-10 XChaCha", cryptocore.XChaCha20Poly1305, "e23aa44bcd338607880e3e93c47baacd8fac0b64c7e70c1a" + "54502185fe5f4123fe8ae3a9f49c117c179b0a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newNT(t, c.cipher, true, defaultOpts)
			stored := testutil.MustHex(t, c.stored)
			orig := bytes.Clone(stored)
			v, err := n.DecryptXattrValue(stored)
			if err != nil || string(v) != "bar" {
				t.Fatalf("DecryptXattrValue = %q, %v", v, err)
			}
			if !bytes.Equal(stored, orig) {
				t.Error("DecryptXattrValue modified its input")
			}
			again, err := n.EncryptXattrValueNonce([]byte("bar"), stored[:n.cc.AEAD.NonceSize()])
			if err != nil || !bytes.Equal(again, stored) {
				t.Errorf("re-encryption = %x, %v", again, err)
			}
			// Legacy fallback: the same value stored base64-encoded.
			v, err = n.DecryptXattrValue([]byte(n.B64().EncodeToString(stored)))
			if err != nil || string(v) != "bar" {
				t.Errorf("legacy base64 value: %q, %v", v, err)
			}
		})
	}
	n := newNT(t, cryptocore.AESGCM, true, defaultOpts)
	if v, err := n.DecryptXattrValue(nil); err != nil || len(v) != 0 {
		t.Errorf("empty value: %q, %v", v, err)
	}
	if v := n.EncryptXattrValue(nil); len(v) != 0 {
		t.Errorf("empty value encrypts to %x", v)
	}
}

// TV-11: legacy filesystem (EME key = MK, padded base64).
func TestTV11Legacy(t *testing.T) {
	for _, c := range []cryptocore.ContentCipher{cryptocore.AESGCM, cryptocore.AESSIV} {
		n := newNT(t, c, false, Options{})
		checkNames(t, n, testutil.MustHex(t, "00112233445566778899aabbccddeeff"), []nameVector{
			{"hello.txt", "G5_RbG3f4_yQPjG1PHtL0w=="},
			{"link1", "Eah7CZaN_CMIw9pi4t8wKA=="},
			{rep("N", 176), "gocryptfs.longname.5XD9JwPL_Y4FX8eUSCScBDXCwp9-bheJFNAqpOQyMIk="},
		})
	}
}

// TV-12: PlaintextNames stores names and symlink targets verbatim.
func TestTV12PlaintextNames(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, Options{PlaintextNames: true})
	for _, name := range []string{"hello.txt", "gocryptfs.diriv", "gocryptfs.longname.x", rep("L", 255)} {
		if enc, err := n.EncryptAndHashName(name, nil); err != nil || enc != name {
			t.Errorf("EncryptAndHashName(%.20s) = %.20s, %v", name, enc, err)
		}
		if dec, err := n.DecryptName(name, nil); err != nil || dec != name {
			t.Errorf("DecryptName(%.20s) = %.20s, %v", name, dec, err)
		}
	}
	if s, err := n.EncryptSymlinkTarget("hello.txt"); err != nil || s != "hello.txt" {
		t.Errorf("symlink target %q, %v", s, err)
	}
	if s, err := n.DecryptSymlinkTarget("hello.txt"); err != nil || s != "hello.txt" {
		t.Errorf("symlink target %q, %v", s, err)
	}
	if !n.IsReservedName(ConfDefaultName, true) || n.IsReservedName(ConfDefaultName, false) || n.IsReservedName(DirIVFilename, true) {
		t.Error("IsReservedName")
	}
}

// TV-13: LongNameMax = 62. The vector's root IV is not recorded in the
// spec, so the hashed name itself cannot be reproduced; check the threshold
// instead (P×40 gives 64 characters and is hashed, hello.txt is not).
func TestTV13LongNameMax62(t *testing.T) {
	n := newNT(t, cryptocore.AESGCM, true, Options{Raw64: true, LongNameMax: 62})
	iv := testutil.MustHex(t, testutil.TV4RootIV)
	enc, err := n.EncryptName(rep("P", 40), iv)
	if err != nil || len(enc) != 64 {
		t.Fatalf("P×40: %s, %v", enc, err)
	}
	if stored, long := n.HashIfLong(enc); !long || len(stored) != 62 {
		t.Errorf("P×40 not hashed: %s", stored)
	}
	if stored, err := n.EncryptAndHashName("hello.txt", iv); err != nil || IsLongContent(stored) {
		t.Errorf("hello.txt: %s, %v", stored, err)
	}
}

// TV-14: reverse mode, fully deterministic.
func TestTV14Reverse(t *testing.T) {
	n := newNT(t, cryptocore.AESSIV, true, defaultOpts)
	piv := []struct {
		path    string
		purpose Purpose
		want    string
	}{
		{"", PurposeDirIV, "a8f7bac432ddc1cb3dc74e684d6ae48b"},
		{"7s5GSiP46Ev-749M2p4GuA", PurposeDirIV, "32aaf73548280eef86d3a23a5d1e97b3"},
		{"F8rwmoCL-WWYHyKmxirgkg", PurposeFileID, "70aaab02fdd720312e1e339196d03d20"},
		{"F8rwmoCL-WWYHyKmxirgkg", PurposeBlock0IV, "d8f0422ea29cf884663bb0c1a6465a31"},
		{"iah1MkNOCMZe5AW-W605oQ", PurposeFileID, "3305c99eeb95f5b27d13b09aa10d8682"},
		{"iah1MkNOCMZe5AW-W605oQ", PurposeBlock0IV, "e01683d2594243feb1a501820556f035"},
		{"XQJH2Es0-94o4Jo8iSvfzQ/XQJH2Es0-94o4Jo8iSvfzQ", PurposeSymlinkIV, "a371c543a53753b2e684463ab7913b3c"},
		{"F8rwmoCL-WWYHyKmxirgkg\x00user.gocryptfs.49MtW6o4r3wu_Jt77wclOA", PurposeXattrIV, "db3a366fda9e22b2436f4e7cc81baaba"},
	}
	for _, c := range piv {
		if got := hex.EncodeToString(PathIV(c.path, c.purpose)); got != c.want {
			t.Errorf("PathIV(%q, %s) = %s, want %s", c.path, c.purpose, got, c.want)
		}
	}

	rootIV := PathIV("", PurposeDirIV)
	const dir1 = "7s5GSiP46Ev-749M2p4GuA"
	dir1IV := PathIV(dir1, PurposeDirIV)
	const longHashed = "gocryptfs.longname.KZLhv8Iemgv84uuZqY908y2e19RsTZPgkEo3Jo0hgw8"
	checkNames(t, n, rootIV, []nameVector{
		{"hello.txt", "F8rwmoCL-WWYHyKmxirgkg"},
		{"empty", "46nvrw-F3nG339VAygltgg"},
		{"f5000", "iah1MkNOCMZe5AW-W605oQ"},
		{"dir1", dir1},
		{"link1", "XQJH2Es0-94o4Jo8iSvfzQ"},
		{rep("N", 176), longHashed},
	})
	checkNames(t, n, dir1IV, []nameVector{
		{"file.txt", "LUBtDMqIDF6AIgI9Cpq3Tg"},
		{"link2", "F90nXEGIdB1N8vLe3Ccr6A"},
	})
	enc, _ := n.EncryptName(rep("N", 176), rootIV)
	const longContent = "urKwM9ZaiTRLJ0Pk02myITwTBfV6VCla_5dqT07i9T0hOAvRAA4CTMT_7c--aFna__UcoQZVmp1-KVPFmL7BIAWg5vk-p3Mej8hY4uZt8FhKEa7R5jNqaEUGxeAqIPrKueol3RXSPff2ASTSIUZjtg9k289YLLGRS2fKY4ZL42dkt4SIimIexMHk4RcP5LgnIwZfVxZhV6q48boFI3YvOoBvvQGpvv3Rnko3N8u1p9bJzPAoQHuphPaGoIkD8-KD"
	if enc != longContent || len(enc) != 256 {
		t.Errorf(".name content = %s", enc)
	}

	links := []struct{ path, target, want string }{
		{"XQJH2Es0-94o4Jo8iSvfzQ", "hello.txt", "o3HFQ6U3U7LmhEY6t5E7PAeTdtikjPsyTXxEoXOYe6-ZBFFXivNjx7w"},
		{dir1 + "/F90nXEGIdB1N8vLe3Ccr6A", "../hello.txt", "Q9a63B3v1JFbZ5hzZDOvCMrxJ279S5wRdG3pem1zRyPWvnNT7195fdUA8B4"},
	}
	for _, l := range links {
		got, err := n.EncryptSymlinkTargetNonce(l.target, ReverseSymlinkNonce(l.path))
		if err != nil || got != l.want {
			t.Errorf("symlink %s: %s, %v; want %s", l.path, got, err, l.want)
		}
		if dec, err := n.DecryptSymlinkTarget(l.want); err != nil || dec != l.target {
			t.Errorf("symlink %s decrypts to %q, %v", l.path, dec, err)
		}
	}
	if got := hex.EncodeToString(ReverseSymlinkNonce("XQJH2Es0-94o4Jo8iSvfzQ")); got != "a371c543a53753b2e684463ab7913b3c" {
		t.Errorf("ReverseSymlinkNonce(link1) = %s", got)
	}

	xattrs := []struct{ path, name, stored, value, want string }{
		{"F8rwmoCL-WWYHyKmxirgkg", "user.foo", "user.gocryptfs.49MtW6o4r3wu_Jt77wclOA", "bar", "db3a366fda9e22b2436f4e7cc81baaba8575a4c85a69164b1ec460f7ad3913bd13797a"},
		{dir1, "user.dirattr", "user.gocryptfs.MAb3gsHE9eO1kzcIOWX7-A", "xyz", "09f96da366e78edcb61c43ae6a46ac0c8a94e500d0bc2e5de50aa564fcf871970ce6ba"},
		{"", "user.rootattr", "user.gocryptfs.B6IIy-Bqa6JVExB9g6q5UA", "r", "606acbf75489cbaf6e924ada7137aa7497e2ab74af5e2c0154a801d4a4a3c5bf2f"},
	}
	for _, x := range xattrs {
		stored, err := n.EncryptXattrName(x.name)
		if err != nil || stored != x.stored {
			t.Errorf("xattr name %s → %s, %v; want %s", x.name, stored, err, x.stored)
		}
		v, err := n.EncryptXattrValueNonce([]byte(x.value), ReverseXattrNonce(x.path, stored))
		if err != nil || hex.EncodeToString(v) != x.want {
			t.Errorf("xattr %s on %q: %x, %v; want %s", x.name, x.path, v, err, x.want)
		}
		if dec, err := n.DecryptXattrValue(v); err != nil || string(dec) != x.value {
			t.Errorf("xattr %s decrypts to %q, %v", x.name, dec, err)
		}
	}
}

// docs/format.md 6.9 examples in the TV-4 root.
func TestBadNameVectors(t *testing.T) {
	opts := defaultOpts
	opts.BadnamePatterns = []string{"*"}
	n := newNT(t, cryptocore.AESGCM, true, opts)
	iv := testutil.MustHex(t, testutil.TV4RootIV)
	cases := []struct{ backing, shown string }{
		{"RstaWk5xuBGCq94EGMhOoQ (conflicted copy)", "a (conflicted copy) GOCRYPTFS_BAD_NAME"},
		{"foo", "foo GOCRYPTFS_BAD_NAME"},
		{"RstaWk5xuBGCq94EGMhOoQx", "ax GOCRYPTFS_BAD_NAME"},
		{"90mGAqBQtvpoJD1knzTcOQ.bak", "hello.txt.bak GOCRYPTFS_BAD_NAME"},
	}
	for _, c := range cases {
		if _, err := n.DecryptName(c.backing, iv); err == nil {
			t.Fatalf("%s must not decrypt", c.backing)
		}
		got, ok := n.displayBadName(c.backing, iv)
		if !ok || got != c.shown {
			t.Errorf("displayBadName(%s) = %q, %v; want %q", c.backing, got, ok, c.shown)
		}
		cands := n.BadNameCandidates(got, iv)
		found := 0
		for _, cand := range cands {
			if cand == c.backing {
				found++
			}
		}
		if found != 1 {
			t.Errorf("BadNameCandidates(%q) = %q does not contain %s exactly once", got, cands, c.backing)
		}
	}
	// No pattern match: stays hidden.
	opts.BadnamePatterns = []string{"*conflicted*"}
	n = newNT(t, cryptocore.AESGCM, true, opts)
	if _, ok := n.displayBadName("foo", iv); ok {
		t.Error("foo must stay hidden with pattern *conflicted*")
	}
	if _, ok := n.displayBadName("RstaWk5xuBGCq94EGMhOoQ (conflicted copy)", iv); !ok {
		t.Error("pattern *conflicted* must match")
	}
	if c := n.BadNameCandidates("foo GOCRYPTFS_BAD_NAME", iv); len(c) != 0 {
		t.Errorf("candidates not matching any pattern: %q", c)
	}
	if c := n.BadNameCandidates("foo", iv); c != nil {
		t.Errorf("name without suffix: %q", c)
	}
	if _, err := New(newCC(t, cryptocore.AESGCM, true), Options{BadnamePatterns: []string{"a["}}); err == nil {
		t.Error("malformed pattern accepted")
	}
}
