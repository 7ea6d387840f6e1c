package nametransform

import (
	"path"
	"strings"
)

// MatchesBadName reports whether the ciphertext name matches one of the
// -badname patterns.
func (n *NameTransform) MatchesBadName(cipherName string) bool {
	for _, p := range n.badname {
		// Patterns were validated in New, so Match cannot fail here.
		if ok, _ := path.Match(p, cipherName); ok {
			return true
		}
	}
	return false
}

// displayBadName returns the name under which an undecryptable backing entry
// is shown (docs/format.md 6.9), or false if no -badname pattern matches it (then
// the entry stays hidden). The longest prefix, from len-1 characters down to
// the encoding of one AES block, that decrypts with dirIV is shown decrypted
// and followed by the rest of the ciphertext name; without such a prefix the
// ciphertext name is shown. BadNameSuffix is appended in both cases.
// DecodeDir uses it only after DecryptNameAt failed.
func (n *NameTransform) displayBadName(cipherName string, dirIV []byte) (string, bool) {
	if n.plaintextNames || cipherName == "" || !n.MatchesBadName(cipherName) {
		return "", false
	}
	if tweak, err := n.tweak(dirIV); err == nil {
		for l := len(cipherName) - 1; l >= n.minBadLen; l-- {
			if plain, why := n.decryptName(cipherName[:l], tweak); why == "" {
				return string(plain) + cipherName[l:] + BadNameSuffix, true
			}
		}
	}
	return cipherName + BadNameSuffix, true
}

// BadNameCandidates returns the backing names that the displayed name (as
// produced by displayBadName) may stand for, or nil if it does not end in
// BadNameSuffix or no pattern is configured. The frontend first looks up
// the ordinary encryption of the full displayed name (a real file may carry
// the suffix); if that does not exist it stats the candidates and accepts
// the result only if exactly one exists, else ENOENT. Order: the displayed
// name without the suffix, unmodified; then, for prefixes from the longest
// to the shortest, EncryptName(prefix) followed by the rest of the name.
// Candidates that match no -badname pattern are left out: they would never
// have been displayed this way.
func (n *NameTransform) BadNameCandidates(displayed string, dirIV []byte) []string {
	base, ok := strings.CutSuffix(displayed, BadNameSuffix)
	if !ok || base == "" || n.plaintextNames || len(n.badname) == 0 {
		return nil
	}
	var out []string
	seen := make(map[string]bool)
	add := func(c string) {
		if len(c) <= NameMax && !seen[c] && n.MatchesBadName(c) {
			seen[c] = true
			out = append(out, c)
		}
	}
	add(base)
	for l := len(base) - 1; l >= 1; l-- {
		enc, err := n.EncryptName(base[:l], dirIV)
		if err != nil {
			continue
		}
		add(enc + base[l:])
	}
	return out
}
