package cryptocore

import (
	"os"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestARM64AssemblyPaths: on arm64, Go's AES-GCM takes its assembly (AES
// and PMULL instructions) only when the CPU reports both; ChaCha20's NEON
// assembly needs ASIMD, which every arm64 CPU has. The emulated CI run
// (test-platforms.bash, qemu-aarch64) sets GOCRYPTFS_TEST_ARM64_ASM=1, so
// that an emulated CPU without them fails here instead of letting the
// vector tests check only the generic Go code.
func TestARM64AssemblyPaths(t *testing.T) {
	t.Logf("arm64 CPU: AES %v, PMULL %v, ASIMD %v", cpu.ARM64.HasAES, cpu.ARM64.HasPMULL, cpu.ARM64.HasASIMD)
	if os.Getenv("GOCRYPTFS_TEST_ARM64_ASM") == "" {
		return
	}
	if !HasAESGCMHardware() || !cpu.ARM64.HasASIMD {
		t.Fatal("GOCRYPTFS_TEST_ARM64_ASM is set, but this CPU lacks AES, PMULL or ASIMD: the assembly of AES-GCM or ChaCha20 would not run")
	}
}
