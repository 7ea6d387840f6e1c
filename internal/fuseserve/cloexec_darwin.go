package fuseserve

// sockCloexec: macOS has no SOCK_CLOEXEC. fusermountMount, the only user,
// serves the io_uring transport, which is Linux only and never runs here.
const sockCloexec = 0
