package main

import (
	"strings"
	"testing"
)

// TestRedactedArgs: -d logs the command line without the master key.
func TestRedactedArgs(t *testing.T) {
	in := []string{"gocryptfs", "-masterkey", "aa-bb", "--masterkey=cc", "-o", "ro,masterkey=dd,fg", "c", "m"}
	want := "gocryptfs -masterkey *** --masterkey=*** -o ro,masterkey=***,fg c m"
	if got := strings.Join(redactedArgs(in), " "); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
