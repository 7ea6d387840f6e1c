package configfile

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// KDF cost budget (docs/keyslots.md "KDF cost budget"). Whoever holds the
// storage can edit a slot's costs; a slot tried before the right one must
// not make the process run out of memory or compute for hours. So before
// any KDF allocates, its cost is checked: a slot over the budget is
// skipped with an error wrapping ErrKDFBudget, and the other slots are
// still tried. The same check runs before a slot is created, so that what
// this machine creates it can also open.
const (
	// KDFMemoryCeiling bounds the memory budget whatever the machine:
	// 512 GiB, above the largest cost anyone can create (scrypt
	// -scryptn 28 with R = 8 needs 256 GiB; Argon2id at most 4 GiB).
	KDFMemoryCeiling uint64 = 1 << 39
	// ScryptMaxWork bounds N·R·P, the number of 64-byte block mixes scrypt
	// computes (its running time): that of -scryptn 28 with R = 8 and
	// P = 1, the most expensive parameters gocryptfs and the reference
	// create. Without it, N = 1024 with R·P near 2^30, which needs little
	// memory, would run for days.
	ScryptMaxWork uint64 = ScryptR << ScryptMaxLogN
)

// DefaultKDFMemoryBudget returns the memory budget for one KDF run on
// this machine: three quarters of the physical memory, or of the memory
// limit of the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes) or of its RLIMIT_AS when lower, and at most
// KDFMemoryCeiling. A KDF above it could not finish here without swapping
// or being killed, and would take other processes with it. The quarter
// left is for the rest of the process and the system. It reads /proc and
// /sys on each call; errors only make it ignore that limit.
func DefaultKDFMemoryBudget() uint64 {
	limit := uint64(math.MaxUint64)
	if ram := physicalMemory(); ram > 0 {
		limit = min(limit, ram)
	}
	if cg := cgroupMemoryLimit(); cg > 0 {
		limit = min(limit, cg)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		limit = min(limit, uint64(rl.Cur))
	}
	return min(limit/4*3, KDFMemoryCeiling)
}

// cgroupMemoryLimit returns the memory limit of the process's cgroup, 0
// when there is none or it cannot be read.
func cgroupMemoryLimit() uint64 {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var limit uint64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// "0::/path" (v2) or "4:memory:/path" (v1).
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 || strings.Contains(f[2], "..") {
			continue
		}
		var file string
		switch {
		case f[0] == "0" && f[1] == "":
			file = filepath.Join("/sys/fs/cgroup", f[2], "memory.max")
		case strings.Contains(","+f[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes")
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v == 0 { // "max" or garbage: no limit
			continue
		}
		if limit == 0 || v < limit {
			limit = v
		}
	}
	return limit
}

// KDFMemory returns the bytes the slot's KDF allocates: 128·R·(N + P + 2)
// for scrypt (its V array, the P blocks it mixes, and a scratch of 2
// blocks), the memory parameter for Argon2id. The slot's parameters must
// have passed Validate, which bounds them so that this cannot overflow.
func (s *KeySlot) KDFMemory() uint64 {
	switch {
	case s.KDF == KDFScrypt && s.Scrypt != nil:
		p := s.Scrypt
		return 128 * uint64(p.R) * (uint64(p.N) + uint64(p.P) + 2)
	case s.KDF == KDFArgon2id && s.Argon2id != nil:
		return uint64(s.Argon2id.Memory) * 1024
	}
	return 0
}

// checkKDFBudget returns an error wrapping ErrKDFBudget when running the
// slot's KDF would need more than budget bytes of memory or, for scrypt,
// more than ScryptMaxWork block mixes. It allocates nothing.
func (s *KeySlot) checkKDFBudget(budget uint64) error {
	if mem := s.KDFMemory(); mem > budget {
		return fmt.Errorf("%w: %s needs %s of memory, above the budget of %s",
			ErrKDFBudget, s.kdfString(), formatBytes(mem), formatBytes(budget))
	}
	if p := s.Scrypt; s.KDF == KDFScrypt && p != nil {
		hi, lo := bits.Mul64(uint64(p.N), uint64(p.R))
		hi2, work := bits.Mul64(lo, uint64(p.P))
		if hi != 0 || hi2 != 0 || work > ScryptMaxWork {
			return fmt.Errorf("%w: %s is more work (N·R·P) than -scryptn %d with R=%d, P=%d",
				ErrKDFBudget, s.kdfString(), ScryptMaxLogN, ScryptR, ScryptP)
		}
	}
	return nil
}

// kdfString names the slot's KDF and costs for messages.
func (s *KeySlot) kdfString() string {
	switch {
	case s.Scrypt != nil:
		return fmt.Sprintf("scrypt N=%d R=%d P=%d", s.Scrypt.N, s.Scrypt.R, s.Scrypt.P)
	case s.Argon2id != nil:
		return fmt.Sprintf("argon2id m=%dKiB", s.Argon2id.Memory)
	}
	return string(s.KDF)
}

// formatBytes prints n in binary units (MiB or GiB, one decimal).
func formatBytes(n uint64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
