package fuseserve

// Mounting and unmounting through fusermount3 ourselves, for the io_uring
// transport: it needs the /dev/fuse descriptor, which go-fuse keeps to
// itself when it mounts. The options are the ones go-fuse hands
// fusermount3 for the same fuse.MountOptions, so both transports mount
// alike.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// magicFD returns N for a mount point of the form /dev/fd/N (a /dev/fuse
// descriptor mounted by the caller), else -1.
func magicFD(mountPoint string) int {
	dir, file := path.Split(mountPoint)
	if dir != "/dev/fd/" {
		return -1
	}
	fd, err := strconv.Atoi(file)
	if err != nil || fd <= 0 {
		return -1
	}
	return fd
}

// fusermountOptions is the -o argument of fusermount3 for o.
func fusermountOptions(o *fuse.MountOptions) string {
	r := append([]string(nil), o.Options...)
	if o.AllowOther {
		r = append(r, "allow_other")
	}
	if o.FsName != "" {
		r = append(r, "fsname="+o.FsName)
	}
	if o.Name != "" {
		r = append(r, "subtype="+o.Name)
	}
	r = append(r, fmt.Sprintf("max_read=%d", o.MaxWrite))
	for i, s := range r {
		// Commas separate options; a backslash escapes.
		r[i] = strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `,`, `\,`)
	}
	return strings.Join(r, ",")
}

// fusermountBinary is fusermount3, or fusermount where only that exists.
func fusermountBinary() (string, error) {
	for _, name := range []string{"fusermount3", "/bin/fusermount3", "fusermount", "/bin/fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("fusermount3 not found")
}

// fusermountMount mounts a FUSE filesystem on the absolute path dir with
// options o and returns the /dev/fuse descriptor (close-on-exec) that
// fusermount3 passed back over a socket pair.
func fusermountMount(dir string, o *fuse.MountOptions) (int, error) {
	bin, err := fusermountBinary()
	if err != nil {
		return -1, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|sockCloexec, 0)
	if err != nil {
		return -1, fmt.Errorf("socketpair: %w", err)
	}
	local := os.NewFile(uintptr(fds[0]), "fusermount-local")
	remote := os.NewFile(uintptr(fds[1]), "fusermount-remote")
	defer local.Close()
	cmd := exec.Command(bin, "-o", fusermountOptions(o), "--", dir)
	cmd.Env = []string{"_FUSE_COMMFD=3"}
	cmd.ExtraFiles = []*os.File{remote}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = cmd.Run()
	remote.Close()
	if err != nil {
		return -1, fmt.Errorf("fusermount3: %w", err)
	}
	buf := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fds[0], buf, oob, 0)
	if err != nil {
		return -1, fmt.Errorf("receiving the /dev/fuse descriptor: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("receiving the /dev/fuse descriptor: bad control message (%v)", err)
	}
	got, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(got) != 1 {
		return -1, fmt.Errorf("receiving the /dev/fuse descriptor: %v", err)
	}
	unix.CloseOnExec(got[0])
	return got[0], nil
}

// fusermountUnmount unmounts dir, retrying a few times as go-fuse does:
// the kernel may still count a file that was just closed as open.
func fusermountUnmount(dir string) error {
	bin, err := fusermountBinary()
	if err != nil {
		return err
	}
	delay := time.Duration(0)
	for try := 0; ; try++ {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "-u", "--", dir)
		cmd.Stderr = &stderr
		err = cmd.Run()
		if err == nil {
			return nil
		}
		if try == 4 {
			return fmt.Errorf("%s (%w)", strings.TrimSpace(stderr.String()), err)
		}
		delay = 2*delay + 5*time.Millisecond
		time.Sleep(delay)
	}
}
