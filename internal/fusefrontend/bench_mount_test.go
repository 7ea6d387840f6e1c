package fusefrontend

import (
	"os"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// BenchmarkMountRead reads a 32 MiB file through a real mount with 128 KiB
// requests (O_DIRECT, so every read is a FUSE READ), with and without
// go-fuse's splice attempt: READ replies are decrypted bytes, which go-fuse
// cannot splice, yet it still writes the header into a pipe and discards
// it on every reply unless DisableSplice is set.
func BenchmarkMountRead(b *testing.B) {
	const size = 32 << 20
	for _, v := range []struct {
		name          string
		disableSplice bool
	}{{"splice", false}, {"nosplice", true}} {
		b.Run(v.name, func(b *testing.B) {
			tf := mountExistingOpts(b, testConfig{}, b.TempDir(), true, func(o *fuse.MountOptions) {
				o.DisableSplice = v.disableSplice
				o.MaxWrite = 128 << 10
			})
			mustWrite(b, tf.path("f"), make([]byte, size))
			buf := make([]byte, 128<<10)
			b.SetBytes(size)
			for b.Loop() {
				f, err := os.OpenFile(tf.path("f"), os.O_RDONLY|0o40000, 0) // O_DIRECT
				if err != nil {
					b.Fatal(err)
				}
				for off := int64(0); off < size; off += int64(len(buf)) {
					if _, err := f.ReadAt(buf, off); err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
			}
		})
	}
}
