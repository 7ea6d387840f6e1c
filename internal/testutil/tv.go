package testutil

// TV1Config is the config file of FORMAT.md 2.2 (TV-1), byte for byte:
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
