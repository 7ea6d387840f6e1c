//go:build !linux

package mountopts

// capHandleKillprivV2: FUSE_HANDLE_KILLPRIV_V2 is a Linux INIT flag (go-fuse
// defines it for Linux only); elsewhere nothing is asked for.
const capHandleKillprivV2 = 0
