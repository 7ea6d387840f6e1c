package inomap

import (
	"sync"
	"testing"
)

func TestTranslate(t *testing.T) {
	const root = 42
	m := New(root)
	cases := []struct {
		name string
		q    QIno
		want uint64
	}{
		{"root device passes through", QIno{root, TagNone, 12345}, 12345},
		// First namespace: the observed gocryptfs.diriv number 2^48 + ino.
		{"tagged on root device", QIno{root, 1, 5}, 1<<48 | 5},
		{"same namespace again", QIno{root, 1, 6}, 1<<48 | 6},
		{"other device", QIno{7, TagNone, 5}, 2<<48 | 5},
		{"other device, other tag", QIno{7, 1, 5}, 3<<48 | 5},
		{"huge inode spills", QIno{root, TagNone, 1 << 50}, FirstSpill},
		{"huge inode is stable", QIno{root, TagNone, 1 << 50}, FirstSpill},
		{"another huge inode", QIno{7, TagNone, 1 << 49}, FirstSpill + 1},
	}
	for _, c := range cases {
		if got := m.Translate(c.q); got != c.want {
			t.Errorf("%s: Translate(%+v) = %d, want %d", c.name, c.q, got, c.want)
		}
	}
	if n := m.NextSpill(); n != FirstSpill+2 {
		t.Errorf("NextSpill = %d, want %d", n, uint64(FirstSpill+2))
	}
}

func TestNamespaceExhaustion(t *testing.T) {
	m := New(0)
	seen := map[uint64]QIno{}
	for dev := uint64(1); dev <= maxNamespace+10; dev++ {
		q := QIno{dev, TagNone, 1}
		n := m.Translate(q)
		if prev, dup := seen[n]; dup {
			t.Fatalf("%+v and %+v both map to %d", prev, q, n)
		}
		seen[n] = q
		if dev > maxNamespace && n < FirstSpill {
			t.Fatalf("dev %d: expected spill, got %d", dev, n)
		}
	}
}

func TestConcurrent(t *testing.T) {
	m := New(1)
	var wg sync.WaitGroup
	res := make([][]uint64, 4)
	for g := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint64(100) {
				res[g] = append(res[g], m.Translate(QIno{Dev: 2 + i%3, Tag: Tag(i % 2), Ino: i}))
			}
		}()
	}
	wg.Wait()
	for g := 1; g < len(res); g++ {
		for i := range res[g] {
			if res[g][i] != res[0][i] {
				t.Fatalf("goroutine %d item %d: %d != %d", g, i, res[g][i], res[0][i])
			}
		}
	}
}
