package smaps

import (
	"maps"
	"testing"
)

func TestParse(t *testing.T) {
	const text = `55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 123 /usr/bin/gpulayer
Size:                132 kB
Rss:                  20 kB
7f00000000-7f00100000 r--s 00000000 fd:01 456 /data/raft.db
Size:               1024 kB
Rss:                 512 kB
7f00200000-7f00300000 rw-p 00000000 00:00 0
Size:               1024 kB
Rss:                 256 kB
7f00400000-7f00500000 r--s 00100000 fd:01 456 /data/raft.db
Rss:                   8 kB
`
	want := map[string]int64{"/usr/bin/gpulayer": 20 << 10, "/data/raft.db": 520 << 10}
	if got := parse(text); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
