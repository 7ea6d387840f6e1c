package main

import (
	"go/ast"
	"strings"
	"testing"
)

// pathOps are the calls that resolve a path string in the kernel (or in
// Go) and so would follow a symlink planted below CIPHERDIR, by package
// (as imported) and function.
var pathOps = map[string][]string{
	"os": {"Open", "OpenFile", "Create", "Stat", "Lstat", "ReadDir", "ReadFile", "WriteFile",
		"Remove", "RemoveAll", "Rename", "Mkdir", "MkdirAll", "MkdirTemp", "CreateTemp", "Readlink",
		"Chmod", "Chown", "Lchown", "Chtimes", "Truncate", "Symlink", "Link", "DirFS", "Chdir", "OpenRoot"},
	"syscall":  unixPathOps,
	"unix":     unixPathOps,
	"filepath": {"Walk", "WalkDir", "EvalSymlinks", "Glob"},
	"ioutil":   {"ReadFile", "WriteFile", "ReadDir", "TempFile", "TempDir"},
}

var unixPathOps = []string{"Open", "Creat", "Stat", "Lstat", "Mknod", "Mkfifo", "Unlink", "Rmdir",
	"Rename", "Mkdir", "Readlink", "Chmod", "Chown", "Lchown", "Truncate", "Symlink", "Link",
	"Statfs", "Access", "Utimes", "UtimesNano", "Utime", "Lgetxattr", "Lsetxattr", "Getxattr",
	"Setxattr", "Listxattr", "Llistxattr", "Removexattr", "Lremovexattr", "Chdir", "Chroot",
	"Mount", "Unmount", "Exec", "Statx"}

// TestPathOpsOnlyInSyscallcompat holds the rule "nothing below CIPHERDIR
// is opened by a path string": outside package syscallcompat (and the
// test helpers), no code under internal/ that ships calls a system call
// or os/filepath function that resolves a path string. Everything below
// CIPHERDIR is reached from a directory fd one component at a time
// without following symlinks (syscallcompat). The exceptions are paths
// that are never below CIPHERDIR, or the user-given roots themselves,
// each listed with its reason.
func TestPathOpsOnlyInSyscallcompat(t *testing.T) {
	// file → call → why that path is not below CIPHERDIR (or must be
	// resolved like the user gave it).
	allowed := map[string]map[string]string{
		"internal/mountinfo/backing.go": {
			"unix.Statfs": "the user-given CIPHERDIR itself (which filesystem holds it)",
			"os.ReadDir":  "CIPHERDIR itself and its parents, for a sync tool's marker files (names only; nothing below CIPHERDIR is opened)",
		},
		"internal/configfile/load.go": {
			"unix.Open": "the config path the user gave (-config), CIPHERDIR/gocryptfs.conf or PLAINDIR/.gocryptfs.reverse.conf, followed like the reference does; opened O_NONBLOCK, only a regular file is read, at most 1 MiB, used only as a config the password must authenticate (see Load)",
		},
		"internal/configfile/kdfbudget.go": {
			"os.ReadFile": "/proc/self/cgroup and the cgroup's memory.max below /sys/fs/cgroup (the KDF memory budget)",
		},
		"internal/fusefrontend/fullfs.go": {
			"os.ReadFile": "/proc/sys/vm dirty-page limits (the low-space headroom)",
		},
		"internal/repair/mounted.go": {
			"filepath.EvalSymlinks": "the user-given CIPHERDIR itself, to match mount sources by name as well as by device and inode",
			"os.ReadDir":            "/proc and /proc/<pid>/fd (who holds CIPHERDIR open)",
			"unix.Stat":             "/proc/<pid>/fd/<n> links and the sources of FUSE mounts in the mount table (stat only, capped at 2 s), compared by device and inode",
			"os.ReadFile":           "/proc/<pid>/fdinfo/<n> and /proc/<pid>/comm",
			"os.Open":               "/proc/<pid>/mountinfo",
		},
		"internal/configfile/write.go": {
			"unix.Open": "the config's directory (CIPHERDIR itself or the -config file's directory), O_PATH; the temp file and the rename are relative to it with O_NOFOLLOW",
		},
		"internal/ctlsock/server.go": {
			"os.Lstat":  "the -ctlsock socket path the user gave, to refuse replacing anything but a stale socket",
			"os.Remove": "the -ctlsock socket path the user gave (a stale socket)",
		},
		"internal/exclude/exclude.go": {
			"os.ReadFile": "the -exclude-from file the user gave (reverse mode)",
		},
		"internal/fusefrontend/root.go": {
			"unix.Open": "the user-given CIPHERDIR itself; below it every call is dirfd-relative",
			"os.Open":   "/proc/self/status (the umask)",
		},
		"internal/fusefrontend/identity.go": {
			"os.Open": "/proc/<pid>/status of the calling process (its groups)",
		},
		"internal/fusefrontend/setgid.go": {
			"os.Open": "/proc/<tid>/status of the calling thread",
		},
		"internal/fusefrontend/flush.go": {
			"filepath.EvalSymlinks": "the user-given CIPHERDIR itself, to find mounts below it in /proc/self/mountinfo",
		},
		"internal/fusefrontend_reverse/root.go": {
			"unix.Open": "the user-given PLAINDIR itself; below it every call is dirfd-relative",
		},
		"internal/fusefrontend_reverse/mountpoint.go": {
			"filepath.EvalSymlinks": "the user-given MOUNTPOINT itself, resolved as the mount resolves it, before mounting",
			"unix.Stat":             "the parent directory of the user-given MOUNTPOINT, before mounting (its identity, to leave the mount point out of the view)",
		},
		"internal/fuseserve/readahead.go": {
			"unix.Stat":    "the mountpoint itself (its device number)",
			"unix.Statfs":  "the mountpoint itself (is it our FUSE mount)",
			"os.ReadFile":  "/sys/class/bdi/<major>:<minor>/read_ahead_kb of the mount",
			"os.WriteFile": "/sys/class/bdi/<major>:<minor>/read_ahead_kb of the mount",
		},
		"internal/daemon/daemon.go": {
			"os.Chdir":    "/ (a daemon leaves its working directory)",
			"os.OpenFile": "/dev/null (a daemon's standard streams)",
		},
		"internal/fuseserve/patience.go": {
			"unix.Stat": "the mount point itself (is the connection still alive)",
		},
		"internal/fuseserve/patience_linux.go": {
			"os.ReadFile": "/proc/<tid>/status of a caller whose request was interrupted",
		},
		"internal/fuseserve/mountattrs.go": {
			"unix.Open":  "the mount point itself, O_PATH, to set the attributes of our new mount",
			"unix.Mount": "the mount point itself (a remount of our new mount for lazytime)",
		},
		"internal/fuseserve/uring.go": {
			"unix.Open": "go-fuse's poll-hack file at the root of our own mount point",
		},
		"internal/fuseuring/fuseuring.go": {
			"os.ReadFile": "/sys/module/fuse/parameters/enable_uring and /sys/devices/system/cpu/possible",
			"unix.Statfs": "our own mount point (a request that makes a new ring entry fetch queued ones)",
		},
		"internal/mountinfo/mountinfo.go": {
			"os.Open":               "/proc/self/mountinfo",
			"filepath.EvalSymlinks": "the user-given CIPHERDIR itself, to match it against the mount table",
		},
		"internal/readpassword/readpassword.go": {
			"os.Open":     "the -passfile the user gave",
			"os.Readlink": "/proc/self/fd/<n> of stdin, to name what it is connected to",
		},
		"internal/unlock/secrets.go": {
			"os.Open": "the -keyfile or -newkeyfile the user gave (read whole, at most 8 MiB)",
		},
		"internal/speed/speed.go": {
			"os.Open": "/proc/cpuinfo",
		},
	}
	used := map[string]bool{}
	for _, sf := range shippingFiles(t) {
		if !strings.HasPrefix(sf.path, "internal/") ||
			strings.HasPrefix(sf.path, "internal/syscallcompat/") {
			continue
		}
		// Which local names the path-op packages are imported as.
		pkgs := map[string]string{}
		for _, imp := range sf.f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			switch p {
			case "os", "syscall", "golang.org/x/sys/unix", "path/filepath", "io/ioutil":
				pkgs[name] = p[strings.LastIndex(p, "/")+1:]
			}
		}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok || pkgs[id.Name] == "" {
				return true
			}
			pkg := pkgs[id.Name]
			for _, op := range pathOps[pkg] {
				if sel.Sel.Name != op {
					continue
				}
				call := pkg + "." + op
				if allowed[sf.path][call] != "" {
					used[sf.path+" "+call] = true
					return true
				}
				t.Errorf("%s: %s resolves a path string, which would follow a symlink planted below CIPHERDIR; "+
					"reach the entry from a directory fd with the syscallcompat helpers (openat with O_NOFOLLOW, "+
					"openat2 RESOLVE_BENEATH), or, for a path that is never below CIPHERDIR, add it to the "+
					"allowlist of this test with the reason", sf.path, call)
			}
			return true
		})
	}
	// An allowlist entry that is no longer needed goes.
	for file, calls := range allowed {
		for call := range calls {
			if !used[file+" "+call] {
				t.Errorf("allowlist entry %s %s is not used any more: remove it", file, call)
			}
		}
	}
}
