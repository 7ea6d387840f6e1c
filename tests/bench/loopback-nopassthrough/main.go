// Command loopback-nopassthrough mounts go-fuse's loopback node tree
// (fs.NewLoopbackRoot) with the options of go-fuse's loopback example
// (1 s entry and attribute timeouts, real permission bits), but refuses
// FUSE passthrough (CAP_PASSTHROUGH). As root, the example hands every
// opened file to the kernel, which then reads and writes the backing file
// itself without a request to the daemon; an encrypting filesystem can
// never do that. With passthrough off, every READ and WRITE goes through
// the daemon, so this is the cost of the FUSE request path for data, the
// column benchmark.bash compares the streaming rows with.
//
// By default go-fuse serves the mount over /dev/fuse ("lo-nopt", the
// limit of the classic transport). With -uring the same tree with the
// same options is served by our transport (fuseserve.Mount with
// TransportURing, "lo-uring": the limit of FUSE over io_uring); it fails
// if the kernel does not offer io_uring, and on unmount it prints how
// many requests travelled through the rings and through /dev/fuse.
//
// Usage: loopback-nopassthrough [-uring] MOUNTPOINT ORIGINAL
//
// It serves until the mount is unmounted (fusermount3 -u MOUNTPOINT).
package main

import (
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/fuseserve"
)

func main() {
	uring := flag.Bool("uring", false, "serve over FUSE io_uring (our transport) instead of go-fuse's /dev/fuse loop")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: loopback-nopassthrough [-uring] MOUNTPOINT ORIGINAL")
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	mnt, orig := flag.Arg(0), flag.Arg(1)
	if !*uring {
		srv, err := mount(mnt, orig, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loopback-nopassthrough: mounting %s on %s: %v\n", orig, mnt, err)
			os.Exit(1)
		}
		srv.Wait()
		return
	}
	srv, err := mountURing(mnt, orig, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopback-nopassthrough: mounting %s on %s over io_uring: %v\n", orig, mnt, err)
		os.Exit(1)
	}
	srv.Wait()
	st := srv.Stats()
	fmt.Fprintf(os.Stderr, "loopback-nopassthrough: %s; %d requests through the rings (%d queues, %d entries), %d through /dev/fuse %v\n",
		st.Reason, st.RingRequests, st.RingQueues, st.RingEntries, st.DevRequests, st.DevByOpcode)
}

// options are the node tree options of both transports: those of go-fuse's
// loopback example, passthrough refused. MaxWrite is go-fuse's default
// (128 KiB), spelled out because fuseserve sizes the ring payload buffers
// from it. A non-nil trace receives go-fuse's request log (one line per
// request).
func options(orig, name string, trace *log.Logger) *fs.Options {
	sec := time.Second
	return &fs.Options{
		AttrTimeout:     &sec,
		EntryTimeout:    &sec,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:               orig,
			Name:                 name,
			MaxWrite:             128 << 10,
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
			Debug:                trace != nil,
			Logger:               trace,
		},
	}
}

// mount serves the loopback tree of orig on mnt without passthrough,
// through go-fuse's own server over /dev/fuse.
func mount(mnt, orig string, trace *log.Logger) (*fuse.Server, error) {
	root, err := fs.NewLoopbackRoot(orig)
	if err != nil {
		return nil, err
	}
	return fs.Mount(mnt, root, options(orig, "loopback-nopassthrough", trace))
}

// mountURing serves the same tree with the same options over io_uring
// (fuseserve, TransportURing), or fails. A non-nil trace receives one
// record per request (fuseserve.Options.Trace).
func mountURing(mnt, orig string, trace *slog.Logger) (*fuseserve.Server, error) {
	root, err := fs.NewLoopbackRoot(orig)
	if err != nil {
		return nil, err
	}
	return fuseserve.Mount(mnt, root, options(orig, "loopback-uring", nil),
		fuseserve.Options{Transport: fuseserve.TransportURing, Trace: trace})
}
