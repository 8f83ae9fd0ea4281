package cluster

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/gpulayer/gpulayer/internal/smaps"
)

// mappedRSS is the resident memory of this process's mappings of path.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	files, err := smaps.FileRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return files[path]
}

// Entries written to and read back from the log store leave the file's
// mapping resident only up to about one trim's worth; the same traffic
// through raft-boltdb alone leaves all of it resident. Every entry reads
// back whole after the trims.
func TestTrimmedStoreKeepsTheMappingSmall(t *testing.T) {
	const entries, size = 48, 1 << 20
	data := make([][]byte, entries)
	for i := range data {
		data[i] = make([]byte, size)
		_, _ = rand.Read(data[i])
	}
	run := func(t *testing.T, trim bool) int64 {
		path, _ := filepath.EvalSymlinks(t.TempDir())
		path = filepath.Join(path, "raft.db")
		bolt, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		var s raftStore = bolt
		if trim {
			s = newTrimmedStore(bolt, path)
		}
		defer s.Close()
		for i := 0; i < entries; i += 8 {
			var batch []*raft.Log
			for j := i; j < i+8; j++ {
				batch = append(batch, &raft.Log{Index: uint64(j + 1), Term: 1, Type: raft.LogCommand, Data: data[j]})
			}
			if err := s.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
		}
		for i := range entries {
			var l raft.Log
			if err := s.GetLog(uint64(i+1), &l); err != nil || !bytes.Equal(l.Data, data[i]) {
				t.Fatalf("entry %d reads back wrong (%v)", i+1, err)
			}
		}
		return mappedRSS(t, path)
	}
	var plain, trimmed int64
	t.Run("raft-boltdb alone", func(t *testing.T) { plain = run(t, false) })
	t.Run("trimmed", func(t *testing.T) { trimmed = run(t, true) })
	if plain < entries*size/2 {
		t.Fatalf("raft-boltdb alone left %d MiB of its mapping resident: the test no longer shows what it guards", plain>>20)
	}
	if trimmed > 2*logTrimBytes {
		t.Fatalf("trimmed store left %d MiB resident, want at most %d MiB (raft-boltdb alone: %d MiB)", trimmed>>20, 2*logTrimBytes>>20, plain>>20)
	}
	t.Logf("resident after %d MiB written and read: %d MiB alone, %d MiB trimmed", entries*size>>20, plain>>20, trimmed>>20)
}
