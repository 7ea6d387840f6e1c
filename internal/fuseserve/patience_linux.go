package fuseserve

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// sigkillBit is SIGKILL's bit in the signal masks of /proc/PID/status.
const sigkillBit = 1 << (9 - 1)

// callerDying reports whether the thread tid has a fatal signal pending
// or is gone. The kernel marks a fatal signal (SIGKILL, or one whose
// default action kills and that has no handler) by making SIGKILL pending
// in every thread of the process, so the thread's own pending set
// (SigPnd) shows it; ShdPnd is checked too for a SIGKILL not yet
// distributed.
func callerDying(tid uint32) bool {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return true // gone (or hidden): nobody waits for the answer
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok || (string(k) != "SigPnd" && string(k) != "ShdPnd") {
			continue
		}
		m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
		if err == nil && m&sigkillBit != 0 {
			return true
		}
	}
	return false
}
