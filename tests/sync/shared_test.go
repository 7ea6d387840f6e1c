package sync_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gocryptfs/internal/testutil"
)

const (
	sharedFileSize = 96 << 10 // 24 blocks
	sharedMaxPiece = 300      // so a block holds ~27 ranges of both writers
)

// concurrentWrites mounts cipherdir twice with -sharedstorage and has one
// writer process per mount write its half of the byte ranges of one file
// at once, for two rounds: into an empty file (both extend it and race to
// create the header), then over the whole file (read-modify-write of
// shared blocks). After each round a fresh mount must read exactly the
// expected bytes.
func concurrentWrites(t *testing.T, cipherdir string) {
	mnts := [2]string{
		testutil.MountFS(t, gocryptfsBin, cipherdir, "-extpass", "echo test", "-sharedstorage"),
		testutil.MountFS(t, gocryptfsBin, cipherdir, "-extpass", "echo test", "-sharedstorage"),
	}
	f, err := os.Create(filepath.Join(mnts[0], "shared"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Created through one mount, visible through the other at once.
	if _, err := os.Stat(filepath.Join(mnts[1], "shared")); err != nil {
		t.Fatalf("new file not visible through the second mount: %v", err)
	}
	for round := 1; round <= 2; round++ {
		seed := uint64(round * 1000)
		var cmds []*exec.Cmd
		for w, mnt := range mnts {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d,%d,%d,%d", writerEnv, filepath.Join(mnt, "shared"), w, round, seed, sharedFileSize, sharedMaxPiece))
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for w, cmd := range cmds {
			if err := testutil.WaitExit(cmd, testutil.RunTimeout); err != nil {
				t.Fatalf("round %d writer %d: %v", round, w, err)
			}
		}
		fresh := testutil.MountFS(t, gocryptfsBin, cipherdir, "-extpass", "echo test", "-ro")
		got, err := os.ReadFile(filepath.Join(fresh, "shared"))
		if err != nil {
			t.Fatalf("round %d: fresh mount: %v", round, err)
		}
		want := expected(round, sharedFileSize)
		if !bytes.Equal(got, want) {
			bad := 0
			first := -1
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					bad++
					if first < 0 {
						first = i
					}
				}
			}
			t.Fatalf("round %d: fresh mount reads %d bytes, want %d; %d bytes differ, first at %d", round, len(got), len(want), bad, first)
		}
		testutil.UnmountDir(t, fresh)
	}
}

// TestSharedStorageConcurrentWrites runs concurrentWrites on a local
// directory.
func TestSharedStorageConcurrentWrites(t *testing.T) {
	testutil.RequireFuse(t)
	concurrentWrites(t, testutil.InitFS(t, gocryptfsBin))
}
