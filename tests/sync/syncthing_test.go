package sync_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gocryptfs/internal/testutil"
)

// stInstance is one Syncthing instance of the end-to-end test.
type stInstance struct {
	name          string
	home, folder  string
	id            string
	port, guiPort int
	apiKey        string
	cmd           *exec.Cmd
	logs          *testutil.SyncBuffer
}

const stFolderID = "gcfs"

// stConfig is a complete config.xml (version 36, Syncthing 1.19) that keeps
// everything on 127.0.0.1: explicit device addresses, no global or local
// discovery, relays, NAT traversal, STUN, usage or crash reporting or
// upgrade checks; no filesystem watcher, a rescan every second.
const stConfig = `<configuration version="36">
    <folder id="{{FOLDER}}" label="{{FOLDER}}" path="{{PATH}}" type="sendreceive" rescanIntervalS="1" fsWatcherEnabled="false" fsWatcherDelayS="10" ignorePerms="false" autoNormalize="true">
        <filesystemType>basic</filesystemType>
        <device id="{{IDA}}" introducedBy=""></device>
        <device id="{{IDB}}" introducedBy=""></device>
        <minDiskFree unit="%">0</minDiskFree>
        <markerName>.stfolder</markerName>
        <maxConflicts>10</maxConflicts>
        <paused>false</paused>
    </folder>
    <device id="{{IDA}}" name="a" compression="metadata" introducer="false" skipIntroductionRemovals="false" introducedBy="">
        <address>tcp://127.0.0.1:{{PORTA}}</address>
        <paused>false</paused>
        <autoAcceptFolders>false</autoAcceptFolders>
    </device>
    <device id="{{IDB}}" name="b" compression="metadata" introducer="false" skipIntroductionRemovals="false" introducedBy="">
        <address>tcp://127.0.0.1:{{PORTB}}</address>
        <paused>false</paused>
        <autoAcceptFolders>false</autoAcceptFolders>
    </device>
    <gui enabled="true" tls="false" debugging="false">
        <address>127.0.0.1:{{GUIPORT}}</address>
        <apikey>{{APIKEY}}</apikey>
        <theme>default</theme>
    </gui>
    <options>
        <listenAddress>tcp://127.0.0.1:{{PORT}}</listenAddress>
        <globalAnnounceServer></globalAnnounceServer>
        <globalAnnounceEnabled>false</globalAnnounceEnabled>
        <localAnnounceEnabled>false</localAnnounceEnabled>
        <relaysEnabled>false</relaysEnabled>
        <natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted>
        <urSeen>3</urSeen>
        <urURL></urURL>
        <urInitialDelayS>3600</urInitialDelayS>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
        <upgradeToPreReleases>false</upgradeToPreReleases>
        <releasesURL></releasesURL>
        <crashReportingEnabled>false</crashReportingEnabled>
        <crashReportingURL></crashReportingURL>
        <startBrowser>false</startBrowser>
        <stunKeepaliveStartS>0</stunKeepaliveStartS>
        <stunKeepaliveMinS>0</stunKeepaliveMinS>
        <stunServer></stunServer>
        <announceLANAddresses>false</announceLANAddresses>
        <setLowPriority>false</setLowPriority>
        <reconnectionIntervalS>1</reconnectionIntervalS>
        <progressUpdateIntervalS>1</progressUpdateIntervalS>
    </options>
</configuration>
`

// newInstance generates the keys of one instance and reads its device ID.
func newInstance(t *testing.T, name, folder string) *stInstance {
	t.Helper()
	st := need(t, "syncthing")
	home := testutil.NewDir(t, "st-"+name)
	in := &stInstance{name: name, home: home, folder: folder, port: freePort(t), guiPort: freePort(t), logs: &testutil.SyncBuffer{}}
	key := make([]byte, 16)
	rand.Read(key)
	in.apiKey = hex.EncodeToString(key)
	out, err := stCommand(st, home, "generate", "--home="+home, "--no-default-folder", "--skip-port-probing").CombinedOutput()
	if err != nil {
		t.Fatalf("syncthing generate: %v: %s", err, out)
	}
	out, err = stCommand(st, home, "serve", "--home="+home, "--device-id").Output()
	if err != nil {
		t.Fatalf("syncthing --device-id: %v", err)
	}
	in.id = strings.TrimSpace(string(out))
	if !regexp.MustCompile(`^[A-Z0-9]{7}(-[A-Z0-9]{7}){7}$`).MatchString(in.id) {
		t.Fatalf("unexpected device ID %q", in.id)
	}
	return in
}

// stCommand runs syncthing with an environment that keeps it from
// upgrading, restarting or touching the real home directory.
func stCommand(bin, home string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "STNOUPGRADE=1", "STNORESTART=1", "STNODEFAULTFOLDER=1", "STMONITORED=1")
	return cmd
}

// start writes the config (peer b) and runs the instance.
func (in *stInstance) start(t *testing.T, a, b *stInstance) {
	t.Helper()
	cfg := strings.NewReplacer(
		"{{FOLDER}}", stFolderID, "{{PATH}}", in.folder,
		"{{IDA}}", a.id, "{{IDB}}", b.id,
		"{{PORTA}}", fmt.Sprint(a.port), "{{PORTB}}", fmt.Sprint(b.port),
		"{{PORT}}", fmt.Sprint(in.port), "{{GUIPORT}}", fmt.Sprint(in.guiPort), "{{APIKEY}}", in.apiKey,
	).Replace(stConfig)
	if err := os.WriteFile(filepath.Join(in.home, "config.xml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	in.cmd = stCommand(need(t, "syncthing"), in.home, "serve", "--home="+in.home, "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder", "--logfile=-")
	in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { in.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		in.cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("syncthing %s log:\n%s", in.name, in.logs.String())
		}
	})
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	up := testutil.WaitFor(30*time.Second, func() bool {
		return exited() || in.api("GET", "/rest/system/ping", nil) == nil
	})
	if !up || exited() {
		t.Fatalf("syncthing %s: REST API not up", in.name)
	}
}

// api calls the REST API; out (if not nil) receives the JSON answer.
func (in *stInstance) api(method, path string, out any) error {
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", in.guiPort, path), nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", in.apiKey)
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

func (in *stInstance) mustAPI(t *testing.T, method, path string) {
	t.Helper()
	if err := in.api(method, path, nil); err != nil {
		t.Fatalf("syncthing %s: %v", in.name, err)
	}
}

// idleAndComplete reports whether the instance has scanned, needs nothing
// and sees the peer connected with nothing outstanding.
func (in *stInstance) idleAndComplete(peer *stInstance) bool {
	var status struct {
		State     string `json:"state"`
		NeedFiles int    `json:"needFiles"`
		NeedDel   int    `json:"needDeletes"`
	}
	var comp struct {
		Completion float64 `json:"completion"`
		NeedItems  int     `json:"needItems"`
	}
	if in.api("GET", "/rest/db/status?folder="+stFolderID, &status) != nil ||
		in.api("GET", "/rest/db/completion?folder="+stFolderID+"&device="+peer.id, &comp) != nil {
		return false
	}
	return status.State == "idle" && status.NeedFiles == 0 && status.NeedDel == 0 && comp.Completion == 100 && comp.NeedItems == 0
}

// treeSum lists every entry below dir (except Syncthing's folder marker)
// with its content, for comparing the two copies.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".stfolder" {
			return fs.SkipDir
		}
		if d.Type().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %x\n", rel, c)
		} else {
			fmt.Fprintf(&b, "%s %v\n", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		return "error: " + err.Error()
	}
	return b.String()
}

// TestSyncthingEndToEnd: two Syncthing instances on this machine sync two
// copies of one CIPHERDIR, each with a gocryptfs mount on top. While the
// sync is paused, both sides edit the same file and create the same
// directory with a file in it; after resuming and settling, both mounts
// show every file, the conflict copies included, with the right contents,
// and -fsck finds no errors in either copy.
func TestSyncthingEndToEnd(t *testing.T) {
	testutil.RequireFuse(t)
	need(t, "syncthing")
	start := time.Now()
	dirA := testutil.InitFS(t, gocryptfsBin)
	// The initial state, then B's copy of it.
	mntA := testutil.MountFS(t, gocryptfsBin, dirA, "-extpass", "echo test")
	mustWrite(t, filepath.Join(mntA, "shared.txt"), "base")
	mustWrite(t, filepath.Join(mntA, "untouched"), "same on both")
	testutil.UnmountDir(t, mntA)
	dirB := filepath.Join(testutil.NewDir(t, "b"), "cipher")
	if out, err := exec.Command("cp", "-a", dirA, dirB).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	for _, d := range []string{dirA, dirB} {
		if err := os.Mkdir(filepath.Join(d, ".stfolder"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a, b := newInstance(t, "a", dirA), newInstance(t, "b", dirB)
	a.start(t, a, b)
	b.start(t, a, b)
	settle := func(what string) {
		t.Helper()
		ok := testutil.WaitFor(60*time.Second, func() bool {
			return a.idleAndComplete(b) && b.idleAndComplete(a) && treeSum(t, dirA) == treeSum(t, dirB)
		})
		if !ok {
			t.Fatalf("%s: not in sync after 60 s:\nA:\n%s\nB:\n%s", what, treeSum(t, dirA), treeSum(t, dirB))
		}
	}
	settle("initial sync")

	a.mustAPI(t, "POST", "/rest/system/pause")
	b.mustAPI(t, "POST", "/rest/system/pause")
	mntA = testutil.MountFS(t, gocryptfsBin, dirA, "-extpass", "echo test")
	mntB := testutil.MountFS(t, gocryptfsBin, dirB, "-extpass", "echo test")
	for side, mnt := range map[string]string{"A": mntA, "B": mntB} {
		mustWrite(t, filepath.Join(mnt, "shared.txt"), "edited on "+side)
		if err := os.Mkdir(filepath.Join(mnt, "newdir"), 0o755); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(mnt, "newdir", "file"), "created on "+side)
		mustWrite(t, filepath.Join(mnt, "only-"+side), side)
	}
	// Let both notice their changes while still paused.
	a.mustAPI(t, "POST", "/rest/db/scan?folder="+stFolderID)
	b.mustAPI(t, "POST", "/rest/db/scan?folder="+stFolderID)
	a.mustAPI(t, "POST", "/rest/system/resume")
	b.mustAPI(t, "POST", "/rest/system/resume")
	settle("after resume")

	// Both sides' edits survive: one under the name, one as a conflict copy.
	conflictRE := regexp.MustCompile(`\.sync-conflict-[0-9]{8}-[0-9]{6}-[A-Z0-9]{7}`)
	for _, mnt := range []string{mntA, mntB} {
		ok := testutil.WaitFor(10*time.Second, func() bool {
			return checkView(mnt, conflictRE) == ""
		})
		if !ok {
			t.Errorf("mount %s: %s\nbacking A:\n%s", mnt, checkView(mnt, conflictRE), treeSum(t, dirA))
		}
	}
	for _, d := range []string{dirA, dirB} {
		r := testutil.Run(t, testutil.RunOptions{}, gocryptfsBin, "-fsck", "-extpass", "echo test", d)
		if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "warning: sync conflict") {
			t.Errorf("-fsck %s: want exit 0 with conflict warnings: %v", d, r)
		}
	}
	t.Logf("end-to-end test took %v", time.Since(start).Round(time.Second))
}

// checkView returns what is wrong with the plaintext view of one side
// after the sync ("" if nothing).
func checkView(mnt string, conflictRE *regexp.Regexp) string {
	names := func(dir string) ([]string, error) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out, nil
	}
	root, err := names(mnt)
	if err != nil {
		return err.Error()
	}
	// Expected: newdir, only-A, only-B, shared.txt, its conflict copy
	// (Syncthing's marker before ".txt"), untouched.
	var copies []string
	for _, n := range root {
		if conflictRE.MatchString(n) {
			copies = append(copies, n)
		}
	}
	if len(copies) != 1 || !strings.HasPrefix(copies[0], "shared.sync-conflict-") || !strings.HasSuffix(copies[0], ".txt") {
		return fmt.Sprintf("root lists %q, want one conflict copy of shared.txt", root)
	}
	want := []string{"newdir", "only-A", "only-B", "shared.txt", copies[0], "untouched"}
	slices.Sort(want)
	if !slices.Equal(root, want) {
		return fmt.Sprintf("root lists %q, want %q", root, want)
	}
	if msg := pairContents(mnt, "shared.txt", copies[0], "edited on A", "edited on B"); msg != "" {
		return msg
	}
	for p, c := range map[string]string{"only-A": "A", "only-B": "B", "untouched": "same on both"} {
		if got, err := os.ReadFile(filepath.Join(mnt, p)); err != nil || string(got) != c {
			return fmt.Sprintf("%s reads %q, %v", p, got, err)
		}
	}
	// newdir was created on both sides: its IV file conflicted, so each
	// side's "file" is encrypted under a different IV; one is shown as a
	// conflict copy named after the IV file's marker.
	sub, err := names(filepath.Join(mnt, "newdir"))
	if err != nil {
		return err.Error()
	}
	if len(sub) != 2 || sub[0] != "file" || !strings.HasPrefix(sub[1], "file.sync-conflict-") || !conflictRE.MatchString(sub[1]) {
		return fmt.Sprintf("newdir lists %q, want file and its conflict copy", sub)
	}
	return pairContents(filepath.Join(mnt, "newdir"), sub[0], sub[1], "created on A", "created on B")
}

// pairContents checks that files x and y in dir hold the contents a and
// b, in either order.
func pairContents(dir, x, y, a, b string) string {
	cx, err1 := os.ReadFile(filepath.Join(dir, x))
	cy, err2 := os.ReadFile(filepath.Join(dir, y))
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("read %s/%s: %v %v", x, y, err1, err2)
	}
	got := []string{string(cx), string(cy)}
	slices.Sort(got)
	if !slices.Equal(got, []string{a, b}) {
		return fmt.Sprintf("%s and %s hold %q, want %q and %q", x, y, got, a, b)
	}
	return ""
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
