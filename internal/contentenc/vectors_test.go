package contentenc

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/testutil"
)

// Forward-mode files from docs/format.md section 12 (TV-7, TV-10, TV-11, TV-12):
// each must parse, decrypt to the plaintext, have the mapped sizes, and
// re-encrypt byte-for-byte when sealed with the recorded nonce (all three
// ciphers are deterministic for a fixed nonce).
func TestForwardVectors(t *testing.T) {
	cases := []struct {
		name   string
		cipher cryptocore.ContentCipher
		hkdf   bool
		file   string
		plain  string
	}{
		{"TV-7 one", cryptocore.AESGCM, true, `
			0002 95e7ef1ef9d7205ba8409fa6f9e4ba46
			9d0df759629108b2575bb1eb01dd67ad
			74 b8c8a3a7c00e246b048bfee30aeda6f6`, "a"},
		{"TV-7 hello.txt", cryptocore.AESGCM, true, `
			0002 420b04fae4bc38a8548393d366b9d635
			e55fd73199ac809d2617ce9bb26a19c1
			38544c8e993d38c6691cda11 a7979226216685edf5d656c545c052f0`, "hello world\n"},
		{"TV-7 dir1/file.txt", cryptocore.AESGCM, true, `
			0002 f3a156a3a4412305348f384f685e1fb1
			92786d2202c39a1713bc25f0aed1ede6
			3acbb6 4f5d7b085ab1ddedca6eedc649f36932`, "abc"},
		{"TV-10 XChaCha hello.txt", cryptocore.XChaCha20Poly1305, true, `
			0002 d2091d7026e38b4d26924c28843f4902
			9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d
			0a25c6e06b42a2504d6f2bab 3ce9baa002d31e96f6a2bb7113a9e52d`, "hello world\n"},
		{"TV-10 AES-SIV hello.txt", cryptocore.AESSIV, true, `
			0002 947625b5739c88c2f50591a452732e6d
			ee6c6d05a1dce254dc222684ab9b8daa
			f18274dc4e75b5d50a3ce2ce7917e321 774369d517dee5b049c7376e`, "hello world\n"},
		{"TV-11 legacy GCM hello.txt", cryptocore.AESGCM, false, `
			0002 ae2c1aeee2199dc19957fc2c24156d06
			ca8d24f7f0d7ae82f68265ff5cb107d8
			6c32e61ec37e5fedb720e8ff fa15fe8e808582be76dc6366f0ac58ee`, "hello world\n"},
		{"TV-11 legacy AES-SIV hello.txt", cryptocore.AESSIV, false, `
			0002 d2ac4cc7cc1516383469bc37fff4b2d6
			30e66b4b8bf228fa489aa758375c6852
			d714fc34558bc106614fa2688b816143 99c921843f799e9647d6e093`, "hello world\n"},
		{"TV-12 plaintextnames hello.txt", cryptocore.AESGCM, true, `
			0002 21b3e8c518528222e9dcb3dc267bd674
			249bbe28bc67937008ecb4c452fbdd16
			9df99c83ee33f41a3e51d89f 15488474435458642eae019f89d4f0fa`, "hello world\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ce := newCE(t, c.cipher, testutil.MasterKeyHex, c.hkdf)
			file := testutil.MustHex(t, c.file)
			if got := ce.CipherSizeToPlainSize(uint64(len(file))); got != uint64(len(c.plain)) {
				t.Errorf("CipherSizeToPlainSize(%d) = %d, want %d", len(file), got, len(c.plain))
			}
			if got := ce.PlainSizeToCipherSize(uint64(len(c.plain))); got != uint64(len(file)) {
				t.Errorf("PlainSizeToCipherSize(%d) = %d, want %d", len(c.plain), got, len(file))
			}
			h, err := ParseHeader(file[:HeaderLen])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h.Pack(), file[:HeaderLen]) {
				t.Errorf("Pack = %x, want %x", h.Pack(), file[:HeaderLen])
			}
			body := file[HeaderLen:]
			pt, err := ce.DecryptBlocks(nil, body, 0, h.ID[:])
			if err != nil || string(pt) != c.plain {
				t.Fatalf("DecryptBlocks = %q, %v; want %q", pt, err, c.plain)
			}
			pt, err = ce.DecryptBlock(nil, body, 0, h.ID[:])
			if err != nil || string(pt) != c.plain {
				t.Fatalf("DecryptBlock = %q, %v; want %q", pt, err, c.plain)
			}
			nonce := body[:ce.NonceSize()]
			ct, err := ce.EncryptBlockNonce(nil, []byte(c.plain), 0, h.ID[:], nonce)
			if err != nil || !bytes.Equal(ct, body) {
				t.Fatalf("EncryptBlockNonce = %x, %v; want %x", ct, err, body)
			}
			// The same block under another number must not open.
			if _, err := ce.DecryptBlock(nil, body, 1, h.ID[:]); !errors.Is(err, ErrCorruptBlock) {
				t.Errorf("block #0 opened as block #1: %v", err)
			}
		})
	}
}

// TV-7: the AAD of a single-block file, spelled out.
func TestAADTV7(t *testing.T) {
	got := AAD(nil, 0, testutil.MustHex(t, "95e7ef1ef9d7205ba8409fa6f9e4ba46"))
	if want := "000000000000000095e7ef1ef9d7205ba8409fa6f9e4ba46"; hex.EncodeToString(got) != want {
		t.Errorf("AAD = %x, want %s", got, want)
	}
}

// TV-14: reverse mode is deterministic, so encrypting with the path-derived
// file ID and nonces must reproduce the view byte for byte.
func TestReverseVectorsTV14(t *testing.T) {
	ce := newCE(t, cryptocore.AESSIV, testutil.MasterKeyHex, true)
	// The spec lists these derived values for hello.txt and f5000.
	for _, c := range []struct{ path, purpose, want string }{
		{"F8rwmoCL-WWYHyKmxirgkg", "FILEID", "70aaab02fdd720312e1e339196d03d20"},
		{"F8rwmoCL-WWYHyKmxirgkg", "BLOCK0IV", "d8f0422ea29cf884663bb0c1a6465a31"},
		{"iah1MkNOCMZe5AW-W605oQ", "FILEID", "3305c99eeb95f5b27d13b09aa10d8682"},
		{"iah1MkNOCMZe5AW-W605oQ", "BLOCK0IV", "e01683d2594243feb1a501820556f035"},
	} {
		if got := hex.EncodeToString(pathIV(c.path, c.purpose)); got != c.want {
			t.Fatalf("pathiv(%q, %q) = %s, want %s", c.path, c.purpose, got, c.want)
		}
	}
	cases := []struct {
		name, path, plain, want string
	}{
		{"hello.txt", "F8rwmoCL-WWYHyKmxirgkg", "hello world\n", `
			0002 70aaab02fdd720312e1e339196d03d20
			d8f0422ea29cf884663bb0c1a6465a31
			c1f5939968850a66b926d42aa80b2bec f5dd2e8669796a0b99b9f021`},
		{"dir1/file.txt", "7s5GSiP46Ev-749M2p4GuA/LUBtDMqIDF6AIgI9Cpq3Tg", "abc", `
			0002 8304b698788a6db7a149e9b10def78e5
			6341be15d7a683bbb0bf36f63bbf9273
			7e69567c820ba894b011f699ef9d5c60 f17713`},
		{"N×176", "gocryptfs.longname.KZLhv8Iemgv84uuZqY908y2e19RsTZPgkEo3Jo0hgw8", "long", `
			0002 9b9dcc694a9c119b8590cc70ba96eed8
			552bcf47ffc4fed85d9eee6c334c19a1
			4505bd9a636c558b7a05865fb00b9299 d1735e30`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := reverseFile(t, ce, c.path, []byte(c.plain))
			if want := testutil.MustHex(t, c.want); !bytes.Equal(got, want) {
				t.Fatalf("got  %x\nwant %x", got, want)
			}
		})
	}
	t.Run("f5000", func(t *testing.T) {
		plain := make([]byte, 5000)
		for i := range plain {
			plain[i] = 'A' + byte(i%26)
		}
		got := reverseFile(t, ce, "iah1MkNOCMZe5AW-W605oQ", plain)
		if len(got) != 5082 {
			t.Fatalf("length %d, want 5082", len(got))
		}
		sum := sha256.Sum256(got)
		if h := hex.EncodeToString(sum[:]); h != "5a86aea2e147d9af23c03dfe27f110bce757a402ccc5de77ea1c2b0e72bd59a2" {
			t.Errorf("SHA-256 = %s", h)
		}
		// xray: block 1 at offset 4146 with nonce …0556f036; the SIV
		// follows each nonce.
		for _, b := range []struct {
			off        int
			nonce, tag string
		}{
			{18, "e01683d2594243feb1a501820556f035", "6964a31b391a72d2a02afccaa0821c7b"},
			{4146, "e01683d2594243feb1a501820556f036", "28b0d2c135d4c16fe81abb06205103d3"},
		} {
			if n := hex.EncodeToString(got[b.off : b.off+16]); n != b.nonce {
				t.Errorf("nonce at %d = %s, want %s", b.off, n, b.nonce)
			}
			if tag := hex.EncodeToString(got[b.off+16 : b.off+32]); tag != b.tag {
				t.Errorf("SIV at %d = %s, want %s", b.off, tag, b.tag)
			}
		}
		if n := DeriveBlockNonce(nil, pathIV("iah1MkNOCMZe5AW-W605oQ", "BLOCK0IV"), 1); hex.EncodeToString(n) != "e01683d2594243feb1a501820556f036" {
			t.Errorf("DeriveBlockNonce(1) = %x", n)
		}
	})
}

// reverseFile builds the reverse-mode view of a file: header with the
// derived file ID, blocks with derived nonces.
func reverseFile(t *testing.T, ce *ContentEnc, path string, plain []byte) []byte {
	t.Helper()
	h := FileHeader{Version: CurrentVersion}
	copy(h.ID[:], pathIV(path, "FILEID"))
	out, err := ce.EncryptBlocksDerived(h.Pack(), plain, 0, h.ID[:], pathIV(path, "BLOCK0IV"))
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(out)) != ce.PlainSizeToCipherSize(uint64(len(plain))) {
		t.Errorf("view size %d, want %d", len(out), ce.PlainSizeToCipherSize(uint64(len(plain))))
	}
	back, err := ce.DecryptBlocks(nil, out[HeaderLen:], 0, h.ID[:])
	if err != nil || !bytes.Equal(back, plain) {
		t.Errorf("view does not decrypt back: %v", err)
	}
	return out
}

// The v1.3-reverse vector's README gives the MD5 of one encrypted file of
// its view (a multi-block file, unlike TV-14's).
func TestReverseVectorV13(t *testing.T) {
	v := testutil.VectorNamed(t, "v1.3-reverse")
	plain, err := os.ReadFile(filepath.Join(testutil.VectorDir(t, v.Name), "dir1/dir2/file"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != 10000 || !allZero(plain) {
		t.Fatalf("unexpected plaintext: %d bytes", len(plain))
	}
	ce := newCE(t, cryptocore.ContentCipher(v.Cipher), v.MasterKey, v.HKDF)
	got := reverseFile(t, ce, "zOsW1-BUX54hC2hmhu2EOw/4ZqrpGQdw5r07KR1qw2ZeQ/tfCm9Sp9J_Dvc-jD7J6p8g", plain)
	if sum := md5.Sum(got); hex.EncodeToString(sum[:]) != "9818501d214c5eb42ca2472caf6c82a1" {
		t.Errorf("MD5 = %x, want 9818501d214c5eb42ca2472caf6c82a1", sum)
	}
}

// Every file written by the reference in the forward vectors decrypts with
// the master key from the README: the regular files to "It works!\n"; the
// symlinks are skipped, whether real or flattened into a file holding the
// target (base64 text, or the bare target with PlaintextNames, which fails
// header parsing).
func TestReferenceExamples(t *testing.T) {
	for _, v := range testutil.ForwardVectors() {
		t.Run(v.Name, func(t *testing.T) {
			ce := newCE(t, cryptocore.ContentCipher(v.Cipher), v.MasterKey, v.HKDF)
			decrypted := 0
			err := filepath.WalkDir(testutil.VectorDir(t, v.Name), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				base := d.Name()
				if base == "gocryptfs.conf" || base == "gocryptfs.diriv" || strings.HasSuffix(base, ".name") {
					return nil
				}
				data, link, err := testutil.ReadStored(p)
				if err != nil || link {
					return err
				}
				if len(data) < HeaderLen {
					// A flattened PlaintextNames symlink: the bare target.
					return nil
				}
				h, err := ParseHeader(data[:HeaderLen])
				if err != nil {
					// A flattened symlink: its content is base64 text.
					if !errors.Is(err, ErrBadHeader) {
						t.Errorf("%s: %v", base, err)
					}
					return nil
				}
				pt, err := ce.DecryptBlocks(nil, data[HeaderLen:], 0, h.ID[:])
				if err != nil || string(pt) != testutil.VectorContent {
					t.Errorf("%s: got %q, %v", base, pt, err)
				}
				decrypted++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// status.txt, and the long name file where there is one.
			if want := map[bool]int{false: 1, true: 2}[v.HasLongName]; decrypted != want {
				t.Errorf("decrypted %d files, want %d", decrypted, want)
			}
		})
	}
}

// TV-8: holes are all-zero full blocks and read as zeros, at any position
// including the last; a shorter all-zero block is corruption.
func TestHolesTV8(t *testing.T) {
	for _, c := range allCiphers {
		t.Run(c.String(), func(t *testing.T) {
			ce := newCE(t, c, testutil.MasterKeyHex, true)
			h := RandomHeader(ce.cc.Nonces)
			id := h.ID[:]
			cbs := ce.CipherBS()
			hole := make([]byte, cbs)
			tests := []struct {
				name      string
				plainSize uint64 // size of the file
				blocks    [][]byte
				want      []byte
			}{
				// truncate -s 8192 on an empty file
				{"hole1", 8192, [][]byte{hole, hole}, make([]byte, 8192)},
				// truncate -s 10000: two holes and a real 1808-byte block
				{"hole2", 10000, [][]byte{hole, hole, ce.EncryptBlock(nil, make([]byte, 1808), 2, id)}, make([]byte, 10000)},
				// one byte written at 9000 of an empty file
				{"hole4", 9001, [][]byte{hole, hole, ce.EncryptBlock(nil, append(make([]byte, 808), 'x'), 2, id)},
					append(make([]byte, 9000), 'x')},
			}
			for _, tc := range tests {
				body := bytes.Join(tc.blocks, nil)
				if got := ce.CipherSizeToPlainSize(uint64(HeaderLen + len(body))); got != tc.plainSize {
					t.Errorf("%s: size %d, want %d", tc.name, got, tc.plainSize)
				}
				if got := ce.PlainSizeToCipherSize(tc.plainSize); got != uint64(HeaderLen+len(body)) {
					t.Errorf("%s: cipher size %d, want %d", tc.name, got, HeaderLen+len(body))
				}
				pt, err := ce.DecryptBlocks(nil, body, 0, id)
				if err != nil || !bytes.Equal(pt, tc.want) {
					t.Errorf("%s: %d bytes, %v", tc.name, len(pt), err)
				}
			}
			// A hole decrypts with any block number and file ID.
			if pt, err := ce.DecryptBlock(nil, hole, 12345, nil); err != nil || len(pt) != DefaultBS || !allZero(pt) {
				t.Errorf("hole block: %d bytes, %v", len(pt), err)
			}
			// Shorter all-zero blocks (all-zero nonce) are corrupt.
			for _, n := range []int{1, ce.NonceSize() - 1, ce.NonceSize(), ce.BlockOverhead(), ce.BlockOverhead() + 1, cbs - 1} {
				if _, err := ce.DecryptBlock(nil, make([]byte, n), 3, id); !errors.Is(err, ErrCorruptBlock) {
					t.Errorf("all-zero block of %d bytes: err = %v", n, err)
				}
			}
			// A full block with zero nonce but some non-zero byte is corrupt.
			bad := make([]byte, cbs)
			bad[cbs-1] = 1
			if _, err := ce.DecryptBlock(nil, bad, 0, id); !errors.Is(err, ErrCorruptBlock) ||
				!strings.Contains(err.Error(), "corrupt block #0: all-zero nonce") {
				t.Errorf("zero nonce, non-zero data: err = %v", err)
			}
		})
	}
}

// TV-15: the corruption cases observed with the reference.
func TestCorruptionTV15(t *testing.T) {
	ce := newCE(t, cryptocore.AESGCM, testutil.MasterKeyHex, true)
	one := testutil.MustHex(t, "0002 95e7ef1ef9d7205ba8409fa6f9e4ba46 9d0df759629108b2575bb1eb01dd67ad 74 b8c8a3a7c00e246b048bfee30aeda6f6")
	h, err := ParseHeader(one[:HeaderLen])
	if err != nil {
		t.Fatal(err)
	}
	// Flip the data byte of `one`.
	bad := bytes.Clone(one)
	bad[HeaderLen+16] ^= 1
	if got := ce.CipherSizeToPlainSize(uint64(len(bad))); got != 1 {
		t.Errorf("stat size %d, want 1", got)
	}
	_, err = ce.DecryptBlocks(nil, bad[HeaderLen:], 0, h.ID[:])
	if !errors.Is(err, ErrCorruptBlock) || err.Error() != "corrupt block #0: cipher: message authentication failed" {
		t.Errorf("err = %v", err)
	}
	// Header version 0003.
	hello := testutil.MustHex(t, "0003 420b04fae4bc38a8548393d366b9d635")
	_, err = ParseHeader(hello)
	if !errors.Is(err, ErrBadHeader) || !strings.HasPrefix(err.Error(), "ParseHeader: invalid version, want=2 have=3. Header hexdump: 0003420b") {
		t.Errorf("err = %v", err)
	}
	// Truncations: 10 bytes, 18 bytes, 18+4128+20.
	for _, c := range []struct {
		size    uint64
		want    uint64
		problem SizeProblem
	}{
		{10, 0, SizeTruncatedHeader},
		{18, 0, SizeOK},
		{18 + 4128 + 20, 4097, SizeIncompleteBlock},
	} {
		p, prob := ce.CipherSizeToPlainSizeCheck(c.size)
		if p != c.want || prob != c.problem {
			t.Errorf("size %d: got %d (%v), want %d (%v)", c.size, p, prob, c.want, c.problem)
		}
	}
	// f4097 cut to 18+4128+20: block #0 still reads, block #1 fails.
	plain := bytes.Repeat([]byte("z"), 4097)
	body := ce.EncryptBlocks(nil, plain, 0, h.ID[:])[:4128+20]
	pt, err := ce.DecryptBlocks(nil, body, 0, h.ID[:])
	var cbe *CorruptBlockError
	if !errors.As(err, &cbe) || cbe.BlockNo != 1 || !bytes.Equal(pt, plain[:4096]) {
		t.Errorf("incomplete block: %d bytes, %v", len(pt), err)
	}
}
