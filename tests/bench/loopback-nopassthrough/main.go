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
// Usage: loopback-nopassthrough MOUNTPOINT ORIGINAL
//
// It serves until the mount is unmounted (fusermount3 -u MOUNTPOINT).
package main

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: loopback-nopassthrough MOUNTPOINT ORIGINAL")
		os.Exit(2)
	}
	srv, err := mount(os.Args[1], os.Args[2], nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopback-nopassthrough: mounting %s on %s: %v\n", os.Args[2], os.Args[1], err)
		os.Exit(1)
	}
	srv.Wait()
}

// mount serves the loopback tree of orig on mnt without passthrough. A
// non-nil trace receives go-fuse's request log (one line per request).
func mount(mnt, orig string, trace *log.Logger) (*fuse.Server, error) {
	root, err := fs.NewLoopbackRoot(orig)
	if err != nil {
		return nil, err
	}
	sec := time.Second
	opts := &fs.Options{
		AttrTimeout:     &sec,
		EntryTimeout:    &sec,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:               orig,
			Name:                 "loopback-nopassthrough",
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
			Debug:                trace != nil,
			Logger:               trace,
		},
	}
	return fs.Mount(mnt, root, opts)
}
