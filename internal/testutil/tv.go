package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TV1Config is the config file of docs/format.md 2.2 (TV-1), byte for byte:
// password "test", master key MasterKeyHex, scrypt N=1024.
const TV1Config = `{
	"Creator": "gocryptfs ref-1a03e99",
	"EncryptedKey": "HdhoRtHSTviqYGXpGKpVcYgKrPExiL/VxkuhX12tRWxxF3FPSQQo5iUCe7aFGd3yI/INU12Dn+LWoFPRkFJ/Jw==",
	"ScryptObject": {
		"Salt": "UsLgvZb3RjlEVoJiL+gMjFiDNONs75BodbnoVXfgWDE=",
		"N": 1024,
		"R": 8,
		"P": 1,
		"KeyLen": 32
	},
	"Version": 2,
	"FeatureFlags": [
		"HKDF",
		"GCMIV128",
		"DirIV",
		"EMENames",
		"LongNames",
		"Raw64"
	]
}
`

// TV-4 (docs/format.md): the directory IVs of the forward filesystem's root and
// of dir1, and dir1's encrypted name.
const (
	TV4RootIV = "64f9baaad0c7f58019d644498392d072"
	TV4Dir1   = "AcJVqps12xZ4feukhiQfOw"
	TV4Dir1IV = "9a04a0542483152e05223fd165350d5b"
)

// TV4CipherDir creates TV-4's directory structure in a new temp dir and
// returns it: gocryptfs.diriv in the root and in dir1. A forward mount of
// it with the TV master key (AES-GCM, HKDF, Raw64) names entries as TV-4
// does.
func TV4CipherDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	d1 := filepath.Join(dir, TV4Dir1)
	if err := os.Mkdir(d1, 0o755); err != nil {
		t.Fatal(err)
	}
	for d, iv := range map[string]string{dir: TV4RootIV, d1: TV4Dir1IV} {
		if err := os.WriteFile(filepath.Join(d, "gocryptfs.diriv"), MustHex(t, iv), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// VectorFile is a ciphertext file of the docs/format.md test vectors that can be
// rebuilt from what the vector recorded (the header's file ID and the
// random nonce of each block), with gocryptfs-xray's output for it (docs/cli.md
// 9).
type VectorFile struct {
	Name      string
	Cipher    Cipher
	ID        string   // hex
	Nonces    []string // hex, one per 4096-byte block
	Plain     []byte
	XrayFlags []string
	// CipherHex is the whole file where the vector gives it; otherwise
	// CipherSHA256 is its SHA-256.
	CipherHex, CipherSHA256 string
	XrayOutput              string
}

// VectorFiles returns the files of TV-7, TV-10 and TV-14 that can be
// rebuilt, with the reference's xray output.
func VectorFiles() []VectorFile {
	tv14 := make([]byte, 5000)
	for i := range tv14 {
		tv14[i] = byte('A' + i%26)
	}
	return []VectorFile{
		{Name: "TV-7 one", Cipher: AESGCM, ID: "95e7ef1ef9d7205ba8409fa6f9e4ba46",
			Nonces: []string{"9d0df759629108b2575bb1eb01dd67ad"}, Plain: []byte("a"),
			CipherHex: "0002 95e7ef1ef9d7205ba8409fa6f9e4ba46 9d0df759629108b2575bb1eb01dd67ad 74 b8c8a3a7c00e246b048bfee30aeda6f6",
			XrayOutput: "Header: Version: 2, Id: 95e7ef1ef9d7205ba8409fa6f9e4ba46, assuming AES-GCM-256 mode\n" +
				"Block  0: IV: 9d0df759629108b2575bb1eb01dd67ad, Tag: b8c8a3a7c00e246b048bfee30aeda6f6, Offset:    18 Len: 33\n"},
		{Name: "TV-7 f4097", Cipher: AESGCM, ID: "14383a4daf35c95c1f1cbd8afbd1b1ce",
			Nonces: []string{"324face0a5bee907b5b557b9af8bddc8", "f723d9e35e29fa2f3e32bba787718673"},
			Plain:  bytes.Repeat([]byte("z"), 4097),
			XrayOutput: "Header: Version: 2, Id: 14383a4daf35c95c1f1cbd8afbd1b1ce, assuming AES-GCM-256 mode\n" +
				"Block  0: IV: 324face0a5bee907b5b557b9af8bddc8, Tag: 652ed5fc7ba69f6ea670b549116914ce, Offset:    18 Len: 4128\n" +
				"Block  1: IV: f723d9e35e29fa2f3e32bba787718673, Tag: 0685bd5b73c6da93ea67212c0da2d1a4, Offset:  4146 Len: 33\n"},
		{Name: "TV-7 hello.txt", Cipher: AESGCM, ID: "420b04fae4bc38a8548393d366b9d635",
			Nonces: []string{"e55fd73199ac809d2617ce9bb26a19c1"}, Plain: []byte("hello world\n"),
			CipherHex: "0002 420b04fae4bc38a8548393d366b9d635 e55fd73199ac809d2617ce9bb26a19c1 38544c8e993d38c6691cda11 a7979226216685edf5d656c545c052f0",
			XrayOutput: "Header: Version: 2, Id: 420b04fae4bc38a8548393d366b9d635, assuming AES-GCM-256 mode\n" +
				"Block  0: IV: e55fd73199ac809d2617ce9bb26a19c1, Tag: a7979226216685edf5d656c545c052f0, Offset:    18 Len: 44\n"},
		{Name: "TV-10 xchacha", Cipher: XChaCha20Poly1305, ID: "d2091d7026e38b4d26924c28843f4902",
			Nonces: []string{"9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d"}, Plain: []byte("hello world\n"),
			XrayFlags: []string{"-xchacha"},
			CipherHex: "0002 d2091d7026e38b4d26924c28843f4902 9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d 0a25c6e06b42a2504d6f2bab 3ce9baa002d31e96f6a2bb7113a9e52d",
			XrayOutput: "Header: Version: 2, Id: d2091d7026e38b4d26924c28843f4902, assuming XChaCha20-Poly1305 mode\n" +
				"Block  0: IV: 9f51d7b104168e80b58d03147c44e6cfea0f94aa0f40e28d, Tag: 3ce9baa002d31e96f6a2bb7113a9e52d, Offset:    18 Len: 52\n"},
		{Name: "TV-10 aessiv", Cipher: AESSIV, ID: "947625b5739c88c2f50591a452732e6d",
			Nonces: []string{"ee6c6d05a1dce254dc222684ab9b8daa"}, Plain: []byte("hello world\n"),
			XrayFlags: []string{"-aessiv"},
			CipherHex: "0002 947625b5739c88c2f50591a452732e6d ee6c6d05a1dce254dc222684ab9b8daa f18274dc4e75b5d50a3ce2ce7917e321 774369d517dee5b049c7376e",
			XrayOutput: "Header: Version: 2, Id: 947625b5739c88c2f50591a452732e6d, assuming AES-SIV-512 mode\n" +
				"Block  0: IV: ee6c6d05a1dce254dc222684ab9b8daa, Tag: f18274dc4e75b5d50a3ce2ce7917e321, Offset:    18 Len: 44\n"},
		{Name: "TV-14 f5000 aessiv (also given -xchacha: -aessiv wins)", Cipher: AESSIV, ID: "3305c99eeb95f5b27d13b09aa10d8682",
			Nonces: []string{"e01683d2594243feb1a501820556f035", "e01683d2594243feb1a501820556f036"}, Plain: tv14,
			XrayFlags:    []string{"-xchacha", "-aessiv"},
			CipherSHA256: "5a86aea2e147d9af23c03dfe27f110bce757a402ccc5de77ea1c2b0e72bd59a2",
			XrayOutput: "Header: Version: 2, Id: 3305c99eeb95f5b27d13b09aa10d8682, assuming AES-SIV-512 mode\n" +
				"Block  0: IV: e01683d2594243feb1a501820556f035, Tag: 6964a31b391a72d2a02afccaa0821c7b, Offset:    18 Len: 4128\n" +
				"Block  1: IV: e01683d2594243feb1a501820556f036, Tag: 28b0d2c135d4c16fe81abb06205103d3, Offset:  4146 Len: 936\n"},
	}
}
