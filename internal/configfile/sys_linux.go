package configfile

import "golang.org/x/sys/unix"

// dirOpenFlags opens the directory of the config file for the *at calls
// only: O_PATH needs no read permission on it.
const dirOpenFlags = unix.O_PATH

// physicalMemory returns the size of the machine's memory, 0 if unknown.
func physicalMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil && si.Totalram > 0 {
		return si.Totalram * uint64(max(si.Unit, 1))
	}
	return 0
}
