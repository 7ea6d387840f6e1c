package main

import (
	"testing"

	"gocryptfs/internal/exitcodes"
)

// TestDarwinRefuses: the darwin build refuses, with exit code 19, the
// mount options whose guarantees need Linux (docs/cli.md 5.7), and only
// those.
func TestDarwinRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		a      argContainer
		euid   int
		refuse bool
	}{
		{"plain", argContainer{}, 1000, false},
		{"plain as root", argContainer{}, 0, false},
		{"allow_other as user", argContainer{allowOther: true}, 1000, false},
		{"allow_other as root", argContainer{allowOther: true}, 0, true},
		{"reverse allow_other as root", argContainer{reverse: true, allowOther: true}, 0, false},
		{"sharedstorage", argContainer{sharedstorage: true}, 1000, true},
		{"reverse sharedstorage", argContainer{reverse: true, sharedstorage: true}, 1000, false},
		{"acl", argContainer{acl: true}, 1000, true},
		{"reverse acl", argContainer{reverse: true, acl: true}, 1000, true},
		{"nosymfollow", argContainer{ko: "noatime,nosymfollow"}, 1000, true},
		{"nosymfollow undone", argContainer{ko: "nosymfollow,symfollow"}, 1000, false},
		{"reverse nosymfollow", argContainer{reverse: true, ko: "nosymfollow"}, 1000, true},
		{"lazytime", argContainer{ko: "lazytime"}, 1000, true},
		{"lazytime undone", argContainer{ko: "lazytime,nolazytime"}, 1000, false},
		{"other ko", argContainer{ko: "noatime,nodev"}, 1000, false},
	} {
		err := darwinRefuses(&c.a, c.euid)
		if (err != nil) != c.refuse {
			t.Errorf("%s: got %v, want refused=%v", c.name, err, c.refuse)
			continue
		}
		if err != nil && exitcodes.From(err) != exitcodes.FuseNewServer {
			t.Errorf("%s: exit code %d, want %d", c.name, exitcodes.From(err), exitcodes.FuseNewServer)
		}
	}
}
