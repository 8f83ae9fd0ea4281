package cluster

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// A follower of hashicorp/raft (v1.7.2) can be stuck for good after it
// installs a snapshot: the leader's next AppendEntries names the
// snapshot's last entry as its previous entry, and the follower looks
// that entry up in its log store, without first comparing it with the
// snapshot it has just installed. When the follower's log has lost that
// entry (its own compaction removed it) or holds a stale one there (an
// uncommitted entry of an earlier term, from a time it led), the lookup
// fails or the terms differ, the follower refuses, the leader walks back
// and sends the snapshot again, and so on forever, while heartbeats keep
// the follower from ever calling an election. The Raft paper's rule 7 of
// InstallSnapshot (Figure 13) says what the follower should do: the
// snapshot's last entry is the log's entry at that index. Upstream issue
// hashicorp/raft#697 describes the same livelock; GpuLayer's fault
// campaign met it about once in a hundred schedules with a follower that
// had led.
//
// snapshotAwareLog applies rule 7 from outside the library, for the case
// the campaign met: when compaction has removed every entry up to the
// newest snapshot's index (the store's first entry is past it), the entry
// at that index is answered as the snapshot records it (its index and
// term, as a no-op: the snapshot holds its effect). Every other lookup is
// the store's. No leader reads the answered entry to send it: it names
// its own snapshot as a previous entry from the snapshot itself, and any
// entry it would send at or below that index is preceded by a previous
// entry the store lacks too, which makes it send the snapshot. Two cases
// are left as the library has them. A restored user snapshot leaves a
// hole at its index above entries that are kept, on purpose: replication
// meets the hole and sends the snapshot; filling it would send a no-op
// instead (TestHASnapshotSaveAndRestore). And a stale entry kept at the
// snapshot's index with another term (#697's other case) holds data a
// leader could read; the campaign has not met it.

// snapMark is the index and term of the newest snapshot in a store.
type snapMark struct {
	mu          sync.Mutex
	index, term uint64
}

func (m *snapMark) get() (index, term uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.index, m.term
}

// advance records a snapshot if it is newer than the one recorded.
func (m *snapMark) advance(index, term uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if index > m.index {
		m.index, m.term = index, term
	}
}

// markSnapshots wraps a snapshot store so that mark follows its newest
// snapshot: the one there at start, and each one written since (taken
// here or installed from a leader).
func markSnapshots(s raft.SnapshotStore, mark *snapMark) (raft.SnapshotStore, error) {
	metas, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(metas) > 0 { // newest first
		mark.advance(metas[0].Index, metas[0].Term)
	}
	return &markingSnapshots{SnapshotStore: s, mark: mark}, nil
}

type markingSnapshots struct {
	raft.SnapshotStore
	mark *snapMark
}

func (s *markingSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	return &markingSink{SnapshotSink: sink, mark: s.mark, index: index, term: term}, nil
}

type markingSink struct {
	raft.SnapshotSink
	mark        *snapMark
	index, term uint64
}

// Close records the snapshot once it is safely in the store.
func (s *markingSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	s.mark.advance(s.index, s.term)
	return nil
}

// snapshotAwareLog is a log store that answers for the newest snapshot's
// last entry as the snapshot records it (see above).
type snapshotAwareLog struct {
	raft.LogStore
	mark *snapMark
}

func (l *snapshotAwareLog) GetLog(index uint64, out *raft.Log) error {
	err := l.LogStore.GetLog(index, out)
	snapIndex, snapTerm := l.mark.get()
	if snapIndex == 0 || index != snapIndex {
		return err
	}
	if !errors.Is(err, raft.ErrLogNotFound) {
		return err // found, or the store failed: as the store says
	}
	if first, ferr := l.LogStore.FirstIndex(); ferr != nil || first <= snapIndex {
		return err // entries at or below the snapshot are kept: a hole, not compaction
	}
	*out = raft.Log{Index: snapIndex, Term: snapTerm, Type: raft.LogNoop}
	return nil
}
