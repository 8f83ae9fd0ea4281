package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// StoredServers reads the newest Raft configuration a data dir holds,
// without starting Raft: the last configuration entry of its log, or,
// where compaction removed every one, its newest snapshot's. A data dir
// with no Raft state holds none (nil, nil). The coordinator asks before
// it opens the node, to tell a member of a cluster that lost a file it
// shares with others (its cluster key) from a node that forms alone.
func StoredServers(dataDir string) ([]raft.Server, error) {
	logPath := filepath.Join(dataDir, "raft.db")
	if _, err := os.Stat(logPath); errors.Is(err, fs.ErrNotExist) {
		return snapshotServers(dataDir)
	} else if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        logPath,
		BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second},
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: read %s: %w", logPath, err)
	}
	defer store.Close()
	first, err := store.FirstIndex()
	if err != nil {
		return nil, fmt.Errorf("cluster: read %s: %w", logPath, err)
	}
	last, err := store.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("cluster: read %s: %w", logPath, err)
	}
	for i := last; i >= first && i > 0; i-- {
		var entry raft.Log
		if err := store.GetLog(i, &entry); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				continue // a gap left by a trim
			}
			return nil, fmt.Errorf("cluster: read %s: %w", logPath, err)
		}
		if entry.Type == raft.LogConfiguration {
			return raft.DecodeConfiguration(entry.Data).Servers, nil
		}
	}
	return snapshotServers(dataDir)
}

// snapshotServers is the configuration of the newest snapshot in dataDir.
func snapshotServers(dataDir string) ([]raft.Server, error) {
	if _, err := os.Stat(filepath.Join(dataDir, "snapshots")); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dataDir, 2, hclog.NewNullLogger())
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	metas, err := snaps.List()
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(metas) == 0 {
		return nil, nil
	}
	return metas[0].Configuration.Servers, nil
}
