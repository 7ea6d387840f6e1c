// Package conflictname recognises and produces the names that file
// synchronisation tools give to conflict copies ("report.txt" becomes
// "report.sync-conflict-20261202-120000-ABCDEFG.txt" with Syncthing), so
// that the forward frontend can show a conflict copy of an encrypted name
// under the plaintext name decorated the same way, and map that decorated
// name back to the ciphertext file.
//
// Every tool inserts a marker in front of the name's extension; the tools
// differ in the marker text and in what counts as the extension:
//
//   - Syncthing: "<stem>.sync-conflict-<YYYYMMDD>-<HHMMSS>-<short device
//     id><ext>", where ext is Go's filepath.Ext of the name: from the last
//     dot, including the leading dot of a name like ".bashrc" (then the stem
//     is empty). The short device ID is the first 7 characters of the
//     device ID (base32, upper case). Documented at
//     https://docs.syncthing.net/users/syncing.html ("Conflicting
//     Changes"), e.g. "report.sync-conflict-20260413-091523-K3X2R2T.docx".
//   - Nextcloud and ownCloud desktop clients: "<stem> (conflicted copy
//     [<user> ]<YYYY-MM-DD> <HHMMSS>)<ext>", the extension starting at the
//     last dot unless that dot starts the name (a hidden file has no
//     extension). https://docs.nextcloud.com/desktop/latest/conflicts.html
//     ("mydata (conflicted copy 2018-04-10 093612).txt"). Older ownCloud
//     clients used "<stem>_conflict-<YYYYMMDD>-<HHMMSS><ext>".
//   - Dropbox: "<stem> (<user or device>'s conflicted copy
//     <YYYY-MM-DD>)<ext>", also with a number (" (1)" or " 1") after the
//     date when there are several on one day;
//     https://help.dropbox.com/syncing-uploads/conflicted-copy.
//   - OneDrive: "<stem>-<COMPUTERNAME><ext>" (the computer name is a
//     NetBIOS name: at most 15 letters, digits and hyphens; Windows reports
//     it in upper case).
//   - Numbered copies as made by OneDrive uploads, Windows Explorer and
//     many other tools: "<stem> (<n>)<ext>".
//
// Dropbox, OneDrive and numbered copies are taken to split the extension
// like Nextcloud. Encrypted (base64url) names contain no dot, so for them
// all tools append the marker at the end; a hashed long name
// "gocryptfs.longname.<hash>" has the extension ".<hash>", so Syncthing
// makes "gocryptfs.longname.sync-conflict-<...>.<hash>" of it.
//
// The package is pure string manipulation and has no state.
package conflictname

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Tool identifies the synchronisation tool whose naming rule a Marker
// follows.
type Tool uint8

// The supported tools, in the order Parse reports candidates.
const (
	Syncthing Tool = iota + 1
	Nextcloud
	Dropbox
	OneDrive
	Numbered
)

// String returns the tool's name for logs.
func (t Tool) String() string {
	switch t {
	case Syncthing:
		return "syncthing"
	case Nextcloud:
		return "nextcloud"
	case Dropbox:
		return "dropbox"
	case OneDrive:
		return "onedrive"
	case Numbered:
		return "numbered"
	}
	return "unknown"
}

// Marker is the text a tool inserted into a name to make a conflict copy,
// e.g. {Syncthing, ".sync-conflict-20261202-120000-ABCDEFG"}.
type Marker struct {
	Tool Tool
	Text string
}

// Candidate is one way of reading a name as a conflict copy: Base with
// Marker inserted the way Marker.Tool does it.
type Candidate struct {
	Base   string
	Marker Marker
}

// markerRE matches a whole marker of each tool.
var markerRE = map[Tool]*regexp.Regexp{
	Syncthing: regexp.MustCompile(`^\.sync-conflict-[0-9]{8}-[0-9]{6}-[A-Z0-9]{7}$`),
	Nextcloud: regexp.MustCompile(`^(?: \(conflicted copy (?:[^()/]* )?[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{6}\)|_conflict-[0-9]{8}-[0-9]{6})$`),
	Dropbox:   regexp.MustCompile(`^ \([^()/]*'s conflicted copy [0-9]{4}-[0-9]{2}-[0-9]{2}(?: \([0-9]+\)| [0-9]+)?\)$`),
	OneDrive:  regexp.MustCompile(`^-[A-Z0-9][A-Z0-9-]{0,14}$`),
	Numbered:  regexp.MustCompile(`^ \([0-9]{1,9}\)$`),
}

// tools lists the tools in Parse order.
var tools = [...]Tool{Syncthing, Nextcloud, Dropbox, OneDrive, Numbered}

// Valid reports whether m is a marker its tool could have produced.
func (m Marker) Valid() bool {
	re := markerRE[m.Tool]
	return re != nil && re.MatchString(m.Text)
}

// extIndex returns where the extension of name starts for tool t
// (len(name) if it has none).
func extIndex(t Tool, name string) int {
	i := strings.LastIndexByte(name, '.')
	switch {
	case i < 0:
		return len(name)
	case t == Syncthing:
		// filepath.Ext: a leading dot starts the extension too.
		return i
	case i == 0:
		return len(name)
	}
	return i
}

// Apply returns name with the marker inserted the way its tool does it.
func (m Marker) Apply(name string) string {
	i := extIndex(m.Tool, name)
	return name[:i] + m.Text + name[i:]
}

// Parse returns every way of reading name as a conflict copy of a
// non-empty base name: for each candidate, Marker.Apply(Base) == name. A
// name may have several readings ("x-Y-Z" is a OneDrive copy of "x-Y" and
// of "x"); callers decide which one exists. Readings are ordered by tool
// (Syncthing first, OneDrive and numbered copies, the least specific
// markers, last), each reading appears once. Names that no tool produces
// give nil.
//
// Parse runs on every lookup of a name that does not exist, so its cost
// is linear in len(name) (see parse).
func Parse(name string) []Candidate {
	out, _ := parse(name)
	return out
}

// parse is Parse; it also returns the number of bytes it handed to the
// markers' regular expressions, the measure of its work that the tests
// bound by a constant times len(name) (Go's regexp matching is linear in
// its input).
//
// Why a constant number of tries suffices: a marker is inserted where the
// base name's extension starts, and an extension is empty or a dot
// followed by no dot, so the marker ends either at the end of name or at
// its last dot. For each end, a marker can only start at a few places: the
// Syncthing and old ownCloud markers have a fixed length, OneDrive's is 2
// to 16 bytes long, and the parenthesised ones (Nextcloud, Dropbox,
// numbered) start one byte before the last or second-to-last '(' before
// the end, since the text between their parentheses holds no other '('.
func parse(name string) (out []Candidate, work int) {
	ends := [2]int{len(name), strings.LastIndexByte(name, '.')}
	nEnds := 2
	if ends[1] <= 0 {
		nEnds = 1
	}
	var buf [maxStarts]int
	for _, t := range tools {
		re := markerRE[t]
		first := markerFirstByte(t)
		for _, end := range ends[:nEnds] {
			for _, start := range markerStarts(t, name, end, &buf) {
				if !strings.ContainsRune(first, rune(name[start])) {
					continue
				}
				text := name[start:end]
				work += len(text)
				if !re.MatchString(text) {
					continue
				}
				base := name[:start] + name[end:]
				m := Marker{Tool: t, Text: text}
				if base == "" || m.Apply(base) != name {
					continue
				}
				c := Candidate{Base: base, Marker: m}
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out, work
}

// Marker lengths and the most start positions markerStarts returns.
const (
	syncthingLen   = len(".sync-conflict-") + 8 + 1 + 6 + 1 + 7 // 38
	oldOwnCloudLen = len("_conflict-") + 8 + 1 + 6              // 25
	oneDriveMinLen = 2
	oneDriveMaxLen = 16
	maxStarts      = oneDriveMaxLen - oneDriveMinLen + 1
)

// markerStarts returns, in increasing order and without duplicates, every
// position in name[:end] where a marker of tool t ending at end could
// start (see parse). The result lives in buf.
func markerStarts(t Tool, name string, end int, buf *[maxStarts]int) []int {
	s := buf[:0]
	add := func(start int) {
		if start >= 0 && start < end && !slices.Contains(s, start) {
			s = append(s, start)
		}
	}
	// lastParens returns the positions of the last and the second-to-last
	// '(' in name[:end] (-1 when missing).
	lastParens := func() (int, int) {
		p := strings.LastIndexByte(name[:end], '(')
		if p < 0 {
			return -1, -1
		}
		return p, strings.LastIndexByte(name[:p], '(')
	}
	switch t {
	case Syncthing:
		add(end - syncthingLen)
	case Nextcloud:
		add(end - oldOwnCloudLen)
		if p, _ := lastParens(); p > 0 {
			add(p - 1)
		}
	case Dropbox:
		if p, q := lastParens(); p > 0 {
			add(p - 1)
			if q > 0 {
				add(q - 1)
			}
		}
	case OneDrive:
		for l := oneDriveMaxLen; l >= oneDriveMinLen; l-- {
			add(end - l)
		}
	case Numbered:
		if p, _ := lastParens(); p > 0 {
			add(p - 1)
		}
	}
	slices.Sort(s)
	return s
}

// markerFirstByte returns the bytes a marker of tool t can start with, to
// skip hopeless regexp matches.
func markerFirstByte(t Tool) string {
	switch t {
	case Syncthing:
		return "."
	case Nextcloud:
		return " _"
	case OneDrive:
		return "-"
	}
	return " "
}

// BaseIs returns the first reading of name as a conflict copy of exactly
// base (e.g. "gocryptfs.diriv"), if there is one.
func BaseIs(name, base string) (Marker, bool) {
	for _, c := range Parse(name) {
		if c.Base == base {
			return c.Marker, true
		}
	}
	return Marker{}, false
}

// toolFiles are the files and directories that sync tools keep in a
// synced folder for themselves: Syncthing's folder marker, ignore file and
// versions directory (https://docs.syncthing.net/users/syncing.html,
// .../users/ignoring.html, .../users/versioning.html), Dropbox's ".dropbox"
// and ".dropbox.cache", Resilio Sync's ".sync", ownCloud's
// ".owncloudsync.log", the onedrive client's ".onedrive".
var toolFiles = map[string]bool{
	".stfolder": true, ".stignore": true, ".stversions": true,
	".dropbox": true, ".dropbox.cache": true, ".sync": true,
	".owncloudsync.log": true, ".onedrive": true, ".csync_journal.db": true,
}

// toolGlobs are patterns of sync tools' temporary files and journals:
// Syncthing's temporary files while pulling (".syncthing.<name>.tmp",
// "~syncthing~<name>.tmp" on Windows) and the Nextcloud/ownCloud sync
// journal ("._sync_<hash>.db", ".sync_<hash>.db", with -wal/-shm).
var toolGlobs = []string{".syncthing.*.tmp", "~syncthing~*.tmp", "._sync_*.db*", ".sync_*.db*"}

// IsToolFile reports whether name is a file a sync tool keeps for itself
// in a synced folder (not a user's file).
func IsToolFile(name string) bool {
	if toolFiles[name] {
		return true
	}
	for _, g := range toolGlobs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
