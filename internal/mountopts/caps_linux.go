package mountopts

import "github.com/hanwen/go-fuse/v2/fuse"

// capHandleKillprivV2 is the INIT flag FUSE_HANDLE_KILLPRIV_V2 (go-fuse
// defines it for Linux only).
const capHandleKillprivV2 = fuse.CAP_HANDLE_KILLPRIV_V2
