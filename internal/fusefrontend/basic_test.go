package fusefrontend

import (
	"bytes"
	"os"
	"testing"
)

func TestSmoke(t *testing.T) {
	tf := mountFS(t, testConfig{})
	mustWrite(t, tf.path("hello.txt"), []byte("hello world!"))
	if got := mustRead(t, tf.path("hello.txt")); !bytes.Equal(got, []byte("hello world!")) {
		t.Fatalf("got %q", got)
	}
	if err := os.Mkdir(tf.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, tf.path("d/x"), []byte("x"))
	ents, err := os.ReadDir(tf.mnt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Fatalf("entries %v", ents)
	}
	t.Log(tf.cipherEntries(t, ""))
}
