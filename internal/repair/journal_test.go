package repair

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

var fuzzKey = bytes.Repeat([]byte{0x5c}, JournalKeyLen)

// TestJournalRoundTrip: what encodeJournal writes, parseJournal reads
// back, for that run and key only.
func TestJournalRoundTrip(t *testing.T) {
	j := &journal{Version: 1, State: "running", Dirs: []dirIntent{{Dir: "AbC/dEf", Plain: "a/b c", Entries: []string{"x", "gocryptfs.longname.abc"}}}}
	data, err := encodeJournal(fuzzKey, "20260102T030405Z", j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseJournal(fuzzKey, "20260102T030405Z", data)
	if err != nil || got.State != "running" || len(got.Dirs) != 1 || strings.Join(got.Dirs[0].Entries, ",") != "x,gocryptfs.longname.abc" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := parseJournal(fuzzKey, "20260102T030405Z-2", data); err == nil {
		t.Error("accepted under another run's name")
	}
	if _, err := parseJournal(bytes.Repeat([]byte{1}, 32), "20260102T030405Z", data); err == nil {
		t.Error("accepted under another key")
	}
	if _, err := parseJournal(fuzzKey, "../x", data); err == nil {
		t.Error("accepted a bad run name")
	}
}

// TestCheckSpace: a copy larger than the free space is refused with
// ENOSPC before anything is written.
func TestCheckSpace(t *testing.T) {
	fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := checkSpace(fd, 1<<62); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("huge copy: %v", err)
	}
	if err := checkSpace(fd, 1); err != nil {
		t.Errorf("tiny copy: %v", err)
	}
}

// FuzzJournal feeds the journal parser arbitrary files, unsigned and
// signed with the right key (so that the JSON and the name checks are
// reached). Whatever it accepts must hold only names the repair could
// have written. Run in CI for a bounded time:
//
//	go test -run XXX -fuzz FuzzJournal -fuzztime 10s ./internal/repair/
func FuzzJournal(f *testing.F) {
	good, _ := encodeJournal(fuzzKey, "20260102T030405Z", &journal{Version: 1, State: "running",
		Dirs: []dirIntent{{Dir: "a/b", Plain: "p/q", Entries: []string{"e1", "e2"}}}})
	body := good[:bytes.IndexByte(good, '\n')]
	f.Add("20260102T030405Z", good, false)
	f.Add("20260102T030405Z", body, true)
	f.Add("20260102T030405Z-3", []byte(`{"version":1,"state":"done"}`), true)
	f.Add("20260102T030405Z", []byte(`{"version":1,"state":"running","diriv_replaced":[{"dir":"..","plain":"","entries":["../x"]}]}`), true)
	f.Add("x", []byte(`{"op":"diriv","dir":"","entries":["../../etc"]}`+"\n"), false)
	f.Fuzz(func(t *testing.T, ts string, data []byte, sign bool) {
		if sign {
			data = append(bytes.Clone(data), "\nhmac-sha256 "...)
			data = append(data, []byte(hexMAC(ts, data[:len(data)-len("\nhmac-sha256 ")]))...)
			data = append(data, '\n')
		}
		j, err := parseJournal(fuzzKey, ts, data)
		if err != nil {
			return
		}
		if !tsRE.MatchString(ts) || j.Version != 1 || (j.State != "running" && j.State != "done") {
			t.Fatalf("accepted %q %+v", ts, j)
		}
		for _, d := range j.Dirs {
			for _, p := range []string{d.Dir, d.Plain} {
				if strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") || strings.Contains("/"+p+"/", "/./") ||
					strings.Contains(p, "//") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
					t.Fatalf("accepted path %q", p)
				}
			}
			for _, e := range d.Entries {
				if !validComponent(e) || reservedName(e) {
					t.Fatalf("accepted entry %q", e)
				}
			}
		}
		// What was accepted encodes and parses to the same.
		again, err := encodeJournal(fuzzKey, ts, j)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseJournal(fuzzKey, ts, again); err != nil {
			t.Fatalf("re-encoded journal refused: %v", err)
		}
	})
}

func hexMAC(ts string, body []byte) string {
	const hexdigits = "0123456789abcdef"
	m := journalMAC(fuzzKey, ts, body)
	out := make([]byte, 0, 2*len(m))
	for _, b := range m {
		out = append(out, hexdigits[b>>4], hexdigits[b&15])
	}
	return string(out)
}
