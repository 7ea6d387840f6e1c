package fuseserve

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// fatalByDefault are the signals whose default action ends the process
// (terminate or dump core), as bits of the masks of /proc/PID/status
// (bit n-1 for signal n): all but SIGCHLD, SIGCONT, SIGSTOP, SIGTSTP,
// SIGTTIN, SIGTTOU, SIGURG and SIGWINCH; real-time signals included.
const fatalByDefault = ^uint64(0) &^ (1<<(17-1) | 1<<(18-1) | 1<<(19-1) | 1<<(20-1) | 1<<(21-1) | 1<<(22-1) | 1<<(23-1) | 1<<(28-1))

// sigkillBit is SIGKILL's bit.
const sigkillBit = 1 << (9 - 1)

// callerDying reports whether the thread tid is about to die or is gone.
// The kernel marks most fatal signals (one whose default action kills and
// that has no handler) by making SIGKILL pending in every thread of the
// process, so the thread's own pending set (SigPnd) shows it; a signal
// whose default action dumps core (SIGQUIT, SIGABRT, ...) stays pending
// as itself, and is fatal when the process neither blocks, ignores nor
// catches it.
func callerDying(tid uint32) bool {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return true // gone (or hidden): nobody waits for the answer
	}
	var pnd, shd, blk, ign, cgt uint64
	fields := map[string]*uint64{"SigPnd": &pnd, "ShdPnd": &shd, "SigBlk": &blk, "SigIgn": &ign, "SigCgt": &cgt}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if p := fields[string(k)]; ok && p != nil {
			*p, _ = strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
		}
	}
	pending := pnd | shd
	if pending&sigkillBit != 0 {
		return true
	}
	return pending&^blk&^ign&^cgt&fatalByDefault != 0
}
