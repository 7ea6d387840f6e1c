package configfile

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gocryptfs/internal/cryptocore"
)

// Key slots: several secrets that each wrap the same master key, like LUKS
// key slots.
//
// Slot 0 is stored in the reference's fields (EncryptedKey, ScryptObject,
// and the FIDO2 flag and object) whenever it is a scrypt password or FIDO2
// slot wrapped in the reference's format, so that the reference opens the
// filesystem with it; FirstKeySlot then holds its label and creation time.
// The other slots live in KeySlots, which the reference ignores. When slot
// 0 is something the reference cannot use, FlagKeySlots is set, every slot
// lives in KeySlots, EncryptedKey is empty and ScryptObject holds a
// placeholder so that the reference reaches its feature-flag check and
// refuses the config with "unknown feature flag".
//
// A slot in KeySlots wraps the master key with AES-256-GCM under a key
// derived from the slot's KDF output with HKDF, and its associated data is
// the slot's JSON without the wrapped key: changing any of its fields
// (kind, label, parameters) makes that slot fail to open and leaves the
// others alone.

// SlotKind is the kind of secret a key slot takes.
type SlotKind string

// The slot kinds.
const (
	// SlotPassword: a password typed or given by -extpass/-passfile.
	SlotPassword SlotKind = "password"
	// SlotFIDO2: the hmac-secret of a FIDO2 token.
	SlotFIDO2 SlotKind = "fido2"
	// SlotKeyFile: the bytes of a key file.
	SlotKeyFile SlotKind = "keyfile"
)

// KDF names the password hash of a slot.
type KDF string

// The KDFs.
const (
	// KDFScrypt is scrypt (the reference's KDF).
	KDFScrypt KDF = "scrypt"
	// KDFArgon2id is Argon2id (RFC 9106).
	KDFArgon2id KDF = "argon2id"
)

// MaxKeySlots bounds the number of slots, so that a hostile config cannot
// make an unlock run an unbounded number of KDFs.
const MaxKeySlots = 32

// slotNonceLen is the nonce length of a slot-format wrap.
const slotNonceLen = 16

// slotKEKInfo is the HKDF info for a slot-format key-encryption key; it
// differs from the reference's (InfoGCM) so that the two wrap formats never
// share a key.
const slotKEKInfo = "gocryptfs key slot KEK v1"

// slotAADPrefix starts the associated data of a slot-format wrap.
const slotAADPrefix = "gocryptfs key slot v1\x00"

// SlotMeta is the descriptive part of a slot.
type SlotMeta struct {
	// Label is a free text chosen with -label.
	Label string `json:"Label,omitempty"`
	// Created is the slot's creation time, RFC 3339 in UTC.
	Created string `json:"Created,omitempty"`
}

// KeySlot is one key slot. The exported fields are its JSON form in
// KeySlots.
type KeySlot struct {
	// Kind is the kind of secret the slot takes.
	Kind SlotKind `json:"Kind"`
	SlotMeta
	// KDF selects Scrypt or Argon2id.
	KDF KDF `json:"KDF"`
	// Scrypt holds the scrypt parameters when KDF is scrypt.
	Scrypt *ScryptParams `json:"Scrypt,omitempty"`
	// Argon2id holds the Argon2id parameters when KDF is argon2id.
	Argon2id *Argon2idParams `json:"Argon2id,omitempty"`
	// FIDO2 holds the token credential of a fido2 slot.
	FIDO2 *FIDO2Params `json:"FIDO2,omitempty"`
	// EncryptedKey is nonce ‖ AES-256-GCM(KEK, MK) ‖ tag.
	EncryptedKey []byte `json:"EncryptedKey"`

	// legacy marks a slot wrapped in the reference's format (slot 0 in
	// EncryptedKey/ScryptObject).
	legacy bool
	// raw and broken keep a slot whose JSON did not fit the fields (e.g.
	// a string where a number belongs): it is written back unchanged and
	// is unusable, while the other slots still work.
	raw    json.RawMessage
	broken string
}

// plainSlot is KeySlot without its JSON methods.
type plainSlot KeySlot

// UnmarshalJSON decodes a slot; a slot whose values have the wrong JSON
// types is kept as broken instead of failing the whole config.
func (s *KeySlot) UnmarshalJSON(b []byte) error {
	var p plainSlot
	if err := json.Unmarshal(b, &p); err != nil {
		*s = KeySlot{raw: append(json.RawMessage(nil), b...), broken: err.Error()}
		return nil
	}
	*s = KeySlot(p)
	return nil
}

// MarshalJSON encodes a slot; a broken one is written back as it was read.
func (s KeySlot) MarshalJSON() ([]byte, error) {
	if s.broken != "" {
		return s.raw, nil
	}
	return json.Marshal(plainSlot(s))
}

// Validate checks the slot's own fields: known kind and KDF, exactly the
// matching parameter object, limits on the KDF costs (weak ones are refused
// as weak scrypt parameters are), the FIDO2 credential of a fido2 slot.
// It does not check the wrapped key's length; opening does.
func (s *KeySlot) Validate() error {
	if s.broken != "" {
		return invalid(RuleKeySlots, "key slot cannot be decoded: %s", s.broken)
	}
	switch s.Kind {
	case SlotPassword, SlotKeyFile:
		if s.FIDO2 != nil {
			return invalid(RuleKeySlots, "a %s slot must not have FIDO2 parameters", s.Kind)
		}
	case SlotFIDO2:
		if s.FIDO2 == nil || len(s.FIDO2.CredentialID) == 0 || len(s.FIDO2.HMACSalt) == 0 {
			return invalid(RuleKeySlots, "fido2 slot without a FIDO2 credential")
		}
	default:
		return invalid(RuleKeySlots, "unknown key slot kind %q", s.Kind)
	}
	switch s.KDF {
	case KDFScrypt:
		if s.Scrypt == nil || s.Argon2id != nil {
			return invalid(RuleKeySlots, "scrypt slot needs exactly the scrypt parameters")
		}
		return validateScrypt(s.Scrypt)
	case KDFArgon2id:
		if s.Argon2id == nil || s.Scrypt != nil {
			return invalid(RuleKeySlots, "argon2id slot needs exactly the argon2id parameters")
		}
		if s.legacy {
			return invalid(RuleKeySlots, "argon2id slot in the reference's fields")
		}
		return validateArgon2id(s.Argon2id)
	}
	return invalid(RuleKeySlots, "unknown KDF %q", s.KDF)
}

// Describe returns the one-line summary -info prints for the slot.
func (s *KeySlot) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.Kind, s.KDF)
	switch {
	case s.Scrypt != nil:
		fmt.Fprintf(&b, " N=%d R=%d P=%d", s.Scrypt.N, s.Scrypt.R, s.Scrypt.P)
	case s.Argon2id != nil:
		fmt.Fprintf(&b, " t=%d m=%dKiB p=%d", s.Argon2id.Time, s.Argon2id.Memory, s.Argon2id.Threads)
	}
	if s.Label != "" {
		fmt.Fprintf(&b, " label=%q", s.Label)
	}
	created := s.Created
	if created == "" {
		created = "unknown"
	}
	fmt.Fprintf(&b, " created=%s", created)
	if s.legacy {
		b.WriteString(" (reference-compatible)")
	}
	if err := s.Validate(); err != nil {
		fmt.Fprintf(&b, " UNUSABLE: %v", err)
	}
	return b.String()
}

// hasSlotData reports whether the config uses anything of the key-slot
// extension (-info lists slots only then, so that plain configs print
// exactly the reference's summary).
func (cf *ConfFile) hasSlotData() bool {
	return len(cf.KeySlots) > 0 || cf.FirstKeySlot != nil || cf.IsFeatureFlagSet(FlagKeySlots)
}

// Slots returns copies of all key slots in order; slot 0 first.
func (cf *ConfFile) Slots() []KeySlot {
	out := make([]KeySlot, 0, len(cf.KeySlots)+1)
	if !cf.IsFeatureFlagSet(FlagKeySlots) {
		sc := cf.ScryptObject
		first := KeySlot{Kind: SlotPassword, KDF: KDFScrypt, Scrypt: &sc, EncryptedKey: cf.EncryptedKey, legacy: true}
		if cf.IsFeatureFlagSet(FlagFIDO2) && cf.FIDO2 != nil {
			fido := *cf.FIDO2
			first.Kind, first.FIDO2 = SlotFIDO2, &fido
		}
		if cf.FirstKeySlot != nil {
			first.SlotMeta = *cf.FirstKeySlot
		}
		out = append(out, first)
	}
	for _, s := range cf.KeySlots {
		out = append(out, s.clone())
	}
	return out
}

// clone copies the slot deeply enough that changing the copy's parameter
// objects does not change the config.
func (s KeySlot) clone() KeySlot {
	if s.Scrypt != nil {
		sc := *s.Scrypt
		s.Scrypt = &sc
	}
	if s.Argon2id != nil {
		a := *s.Argon2id
		s.Argon2id = &a
	}
	if s.FIDO2 != nil {
		f := *s.FIDO2
		s.FIDO2 = &f
	}
	return s
}

// setSlots stores slots into the JSON fields (see the layout above).
func (cf *ConfFile) setSlots(slots []KeySlot) {
	first := slots[0]
	if first.legacy {
		cf.EncryptedKey = first.EncryptedKey
		cf.ScryptObject = *first.Scrypt
		cf.setFlag(FlagKeySlots, false)
		cf.setFlag(FlagFIDO2, first.Kind == SlotFIDO2)
		cf.FIDO2 = first.FIDO2
		cf.FirstKeySlot = nil
		if first.SlotMeta != (SlotMeta{}) {
			meta := first.SlotMeta
			cf.FirstKeySlot = &meta
		}
		slots = slots[1:]
	} else {
		cf.EncryptedKey = nil
		cf.ScryptObject = placeholderScrypt()
		cf.setFlag(FlagFIDO2, false)
		cf.FIDO2 = nil
		cf.setFlag(FlagKeySlots, true)
		cf.FirstKeySlot = nil
	}
	cf.KeySlots = nil
	if len(slots) > 0 {
		cf.KeySlots = append([]KeySlot(nil), slots...)
	}
}

// placeholderScrypt is the ScryptObject of a FlagKeySlots config: valid, so
// that the reference, which checks scrypt parameters before feature flags,
// reports the unknown flag; the all-zero salt marks it as unused.
func placeholderScrypt() ScryptParams {
	return ScryptParams{Salt: make([]byte, ScryptSaltLen), N: 1 << ScryptMinLogN, R: ScryptR, P: ScryptP, KeyLen: ScryptKeyLen}
}

// setFlag adds (at the end, as the reference appends FIDO2) or removes f.
func (cf *ConfFile) setFlag(f FeatureFlag, on bool) {
	if on {
		if !cf.IsFeatureFlagSet(f) {
			cf.FeatureFlags = append(cf.FeatureFlags, f)
		}
		return
	}
	kept := cf.FeatureFlags[:0:0]
	for _, x := range cf.FeatureFlags {
		if x != f {
			kept = append(kept, x)
		}
	}
	cf.FeatureFlags = kept
}

// validateSlotLayout checks the rules of the key-slot extension that
// concern the whole config (rule 11); a single slot's own fields are
// checked only when it is used, so that one damaged slot does not lock out
// the others.
func (cf *ConfFile) validateSlotLayout() error {
	n := len(cf.KeySlots)
	if !cf.IsFeatureFlagSet(FlagKeySlots) {
		n++ // slot 0 in the reference's fields
	}
	if n > MaxKeySlots {
		return invalid(RuleKeySlots, "%d key slots, at most %d are allowed", n, MaxKeySlots)
	}
	if !cf.IsFeatureFlagSet(FlagKeySlots) {
		return nil
	}
	switch {
	case len(cf.KeySlots) == 0:
		return invalid(RuleKeySlots, "feature flag %s is set but there are no key slots", FlagKeySlots)
	case len(cf.EncryptedKey) != 0:
		return invalid(RuleKeySlots, "feature flag %s forbids EncryptedKey", FlagKeySlots)
	case cf.IsFeatureFlagSet(FlagFIDO2) || cf.FIDO2 != nil:
		return invalid(RuleKeySlots, "feature flag %s forbids the top-level FIDO2 credential", FlagKeySlots)
	case cf.FirstKeySlot != nil:
		return invalid(RuleKeySlots, "feature flag %s forbids FirstKeySlot", FlagKeySlots)
	}
	return nil
}

// SlotSpec describes a new or replacement key slot.
type SlotSpec struct {
	// Kind is the kind of secret.
	Kind SlotKind
	// Label is stored verbatim (-label).
	Label string
	// Created is the creation time; the zero time means now.
	Created time.Time
	// Argon2id, when non-nil, selects Argon2id with these costs (Salt and
	// KeyLen are filled in). Otherwise scrypt is used.
	Argon2id *Argon2idParams
	// ScryptLogN is log2(N) for scrypt; 0 means the replaced slot's N (or
	// ScryptDefaultLogN for a new slot).
	ScryptLogN int
	// FIDO2 is the credential of a fido2 slot.
	FIDO2 *FIDO2Params
}

// newSlot builds a slot from spec and wraps masterKey under secret. The
// slot is in the reference's format when legacyOK and the spec allows it
// (a scrypt password or FIDO2 slot). old is the slot being replaced, or nil.
func (cf *ConfFile) newSlot(masterKey, secret []byte, spec SlotSpec, legacyOK bool, old *KeySlot) (KeySlot, error) {
	if len(masterKey) != cryptocore.KeyLen {
		return KeySlot{}, cryptocore.ErrBadKeyLen
	}
	created := spec.Created
	if created.IsZero() {
		created = time.Now()
	}
	s := KeySlot{Kind: spec.Kind, SlotMeta: SlotMeta{Label: spec.Label, Created: created.UTC().Format(time.RFC3339)}}
	if old != nil {
		// A replaced slot keeps its identity: label and creation time.
		if s.Label == "" {
			s.Label = old.Label
		}
		s.Created = old.Created
	}
	if spec.FIDO2 != nil {
		f := *spec.FIDO2
		s.FIDO2 = &f
	}
	if spec.Argon2id != nil {
		a := *spec.Argon2id
		a.Salt, a.KeyLen = cryptocore.RandBytes(Argon2idSaltLen), Argon2idKeyLen
		if err := validateArgon2id(&a); err != nil {
			return KeySlot{}, fmt.Errorf("%w: %w", ErrArgon2idParams, err)
		}
		s.KDF, s.Argon2id = KDFArgon2id, &a
	} else {
		logN := spec.ScryptLogN
		if logN == 0 && old != nil && old.Scrypt != nil {
			logN = old.Scrypt.LogN()
		}
		if logN == 0 {
			logN = ScryptDefaultLogN
		}
		if logN < ScryptMinLogN || logN > ScryptMaxLogN {
			return KeySlot{}, fmt.Errorf("%w: -scryptn %d is outside %d..%d", ErrScryptParams, logN, ScryptMinLogN, ScryptMaxLogN)
		}
		s.KDF = KDFScrypt
		s.Scrypt = &ScryptParams{Salt: cryptocore.RandBytes(ScryptSaltLen), N: 1 << logN, R: ScryptR, P: ScryptP, KeyLen: ScryptKeyLen}
		s.legacy = legacyOK && s.Kind != SlotKeyFile
	}
	if err := s.Validate(); err != nil {
		return KeySlot{}, err
	}
	nonce := cryptocore.RandBytes(cf.slotNonceLen(&s))
	for allZero(nonce) { // an all-zero nonce would be refused by readers
		nonce = cryptocore.RandBytes(len(nonce))
	}
	if err := cf.wrapSlot(&s, masterKey, secret, nonce); err != nil {
		return KeySlot{}, err
	}
	return s, nil
}

// AddSlot appends a new slot that wraps masterKey under secret and returns
// its index. Errors: ErrTooManySlots, ErrScryptParams/ErrArgon2idParams
// for costs out of range, a *ValidationError for an inconsistent spec.
func (cf *ConfFile) AddSlot(masterKey, secret []byte, spec SlotSpec) (int, error) {
	slots := cf.Slots()
	if len(slots) >= MaxKeySlots {
		return 0, fmt.Errorf("%w: at most %d", ErrTooManySlots, MaxKeySlots)
	}
	s, err := cf.newSlot(masterKey, secret, spec, false, nil)
	if err != nil {
		return 0, err
	}
	cf.setSlots(append(slots, s))
	return len(slots), nil
}

// ReplaceSlot replaces slot i by a new slot for secret (-passwd). The label
// and creation time are kept unless spec gives a label; with neither
// Argon2id nor ScryptLogN in spec the slot keeps its KDF and costs. Slot 0
// becomes reference-compatible again when it is a scrypt password or
// FIDO2 slot.
func (cf *ConfFile) ReplaceSlot(i int, masterKey, secret []byte, spec SlotSpec) error {
	slots := cf.Slots()
	if i < 0 || i >= len(slots) {
		return fmt.Errorf("no key slot %d", i)
	}
	old := slots[i]
	if spec.Argon2id == nil && spec.ScryptLogN == 0 && old.Argon2id != nil && old.Validate() == nil {
		a := *old.Argon2id
		spec.Argon2id = &a
	}
	s, err := cf.newSlot(masterKey, secret, spec, i == 0, &old)
	if err != nil {
		return err
	}
	slots[i] = s
	cf.setSlots(slots)
	return nil
}

// RemoveSlot deletes slot i. It refuses to delete the last slot
// (ErrLastSlot). Removing slot 0 makes slot 1 the first; if that one is not
// in the reference's format, FlagKeySlots is set and the reference refuses
// the config until the new first slot is re-wrapped (ReplaceSlot).
// The master key does not change.
func (cf *ConfFile) RemoveSlot(i int) error {
	slots := cf.Slots()
	if i < 0 || i >= len(slots) {
		return fmt.Errorf("no key slot %d", i)
	}
	if len(slots) == 1 {
		return ErrLastSlot
	}
	cf.setSlots(append(slots[:i], slots[i+1:]...))
	return nil
}

// SecretFunc returns the KDF input for slot i (the password, the key
// file's bytes, or the FIDO2 token's hmac-secret for the slot's
// credential). The caller of UnlockWith wipes what it returns. An error skips
// the slot.
type SecretFunc func(i int, s *KeySlot) ([]byte, error)

// UnlockOptions tune UnlockWith.
type UnlockOptions struct {
	// Skipped, if non-nil, is called for each slot of the kind that is
	// not tried, with the reason: its own fields are invalid (a
	// *ValidationError) or its KDF is over the budget (ErrKDFBudget).
	Skipped func(i int, err error)
}

// UnlockWith tries, in order, every slot of the given kind and returns
// the master key and the index of the slot that opened. Slots whose own
// fields are invalid or whose KDF cost is over the budget are skipped
// before any secret is asked for or any KDF memory is allocated, and the
// next slot is tried. Errors: ErrNoSlot when the config has no slot of
// this kind; when every such slot was skipped, the last skipped slot's
// reason (a *ValidationError, or an error wrapping ErrKDFBudget); the
// last SecretFunc error when no secret could be obtained;
// ErrWrongPassword otherwise. Each tried slot costs one KDF run.
//
// The budget is always this machine's (DefaultKDFMemoryBudget); the tests
// pass smaller ones to unlockWithin.
func (cf *ConfFile) UnlockWith(kind SlotKind, secret SecretFunc, opts UnlockOptions) ([]byte, int, error) {
	return cf.unlockWithin(kind, secret, opts, DefaultKDFMemoryBudget())
}

// unlockWithin is UnlockWith with a KDF memory budget of budget bytes.
func (cf *ConfFile) unlockWithin(kind SlotKind, secret SecretFunc, opts UnlockOptions, budget uint64) ([]byte, int, error) {
	slots := cf.Slots()
	var skippedErr, secretErr error
	usable, tried := 0, 0
	for i := range slots {
		s := &slots[i]
		if s.Kind != kind {
			continue
		}
		err := s.Validate()
		if err == nil {
			err = s.checkKDFBudget(budget)
		}
		if err != nil {
			skippedErr = fmt.Errorf("key slot %d: %w", i, err)
			if opts.Skipped != nil {
				opts.Skipped(i, err)
			}
			continue
		}
		usable++
		sec, err := secret(i, s)
		if err != nil {
			secretErr = err
			continue
		}
		tried++
		mk, err := cf.openSlot(s, sec, budget)
		cryptocore.Wipe(sec)
		if err == nil {
			return mk, i, nil
		}
	}
	switch {
	case usable == 0 && skippedErr != nil:
		return nil, -1, skippedErr
	case usable == 0:
		return nil, -1, fmt.Errorf("%w (%s)", ErrNoSlot, kind)
	case tried == 0:
		return nil, -1, secretErr
	}
	return nil, -1, ErrWrongPassword
}

// SlotKinds returns the distinct kinds of the config's slots, in slot order.
func (cf *ConfFile) SlotKinds() []SlotKind {
	var kinds []SlotKind
	for _, s := range cf.Slots() {
		seen := false
		for _, k := range kinds {
			seen = seen || k == s.Kind
		}
		if !seen {
			kinds = append(kinds, s.Kind)
		}
	}
	return kinds
}

// HasSlotKind reports whether the config has a slot of kind k.
func (cf *ConfFile) HasSlotKind(k SlotKind) bool {
	for _, x := range cf.SlotKinds() {
		if x == k {
			return true
		}
	}
	return false
}

// slotAAD is the associated data of the slot's wrap: the reference's eight
// zero bytes for a reference-format slot, else the prefix and the slot's
// JSON without the wrapped key.
func slotAAD(s *KeySlot) ([]byte, error) {
	if s.legacy {
		return wrapAAD(), nil
	}
	c := *s
	c.EncryptedKey = nil
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode key slot: %w", err)
	}
	return append([]byte(slotAADPrefix), b...), nil
}
