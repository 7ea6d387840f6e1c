package configfile

import "golang.org/x/sys/unix"

// dirOpenFlags opens the directory of the config file for the *at calls
// (there is no O_PATH here).
const dirOpenFlags = unix.O_RDONLY

// physicalMemory returns the size of the machine's memory, 0 if unknown.
func physicalMemory() uint64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return n
}
