package faultstore

import (
	"errors"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
)

func entry(i uint64) *raft.Log { return &raft.Log{Index: i, Term: 1, Data: []byte{byte(i)}} }

func stored(t *testing.T, s raft.LogStore) uint64 {
	t.Helper()
	last, err := s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return last
}

func TestLogWriteFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arm     func(*Disk)
		errno   error
		kept    bool // the entry reached the store although the write failed
		kind    string
		recover bool // the next write succeeds by itself
	}{
		{"write error", func(d *Disk) { d.FailWrites(1) }, syscall.EIO, false, "write", true},
		{"fsync error", func(d *Disk) { d.FailSyncs(1) }, syscall.EIO, true, "sync", true},
		{"full disk", func(d *Disk) { d.SetFull(true) }, syscall.ENOSPC, false, "full", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New()
			base := raft.NewInmemStore()
			s := d.LogStore(base)
			if err := s.StoreLog(entry(1)); err != nil {
				t.Fatal(err)
			}
			tc.arm(d)
			err := s.StoreLogs([]*raft.Log{entry(2)})
			if !errors.Is(err, ErrInjected) || !errors.Is(err, tc.errno) {
				t.Fatalf("StoreLogs: %v, want an injected %v", err, tc.errno)
			}
			want := uint64(1)
			if tc.kept {
				want = 2
			}
			if got := stored(t, base); got != want {
				t.Fatalf("last index %d after the failed write, want %d", got, want)
			}
			if got := d.Injected()[tc.kind]; got != 1 {
				t.Fatalf("injected %q = %d, want 1", tc.kind, got)
			}
			err = s.StoreLog(entry(3))
			if tc.recover != (err == nil) {
				t.Fatalf("next write: %v (recovers by itself: %v)", err, tc.recover)
			}
			var l raft.Log
			if err := s.GetLog(1, &l); err != nil {
				t.Fatalf("reads are never refused: %v", err)
			}
		})
	}
}

func TestFullDiskRefusesEveryWrite(t *testing.T) {
	d := New()
	base := raft.NewInmemStore()
	logs, stable := d.LogStore(base), d.StableStore(base)
	snaps := d.SnapshotStore(raft.NewInmemSnapshotStore())
	d.SetFull(true)
	checks := map[string]error{
		"StoreLog":    logs.StoreLog(entry(1)),
		"DeleteRange": logs.DeleteRange(1, 1),
		"Set":         stable.Set([]byte("k"), []byte("v")),
		"SetUint64":   stable.SetUint64([]byte("k"), 1),
	}
	_, err := snaps.Create(raft.SnapshotVersionMax, 1, 1, raft.Configuration{}, 1, nil)
	checks["Create"] = err
	for name, err := range checks {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s on a full disk: %v, want ENOSPC", name, err)
		}
	}
	if v, _ := stable.GetUint64([]byte("k")); v != 0 {
		t.Errorf("a refused SetUint64 stored %d", v)
	}

	d.SetFull(false)
	sink, err := snaps.Create(raft.SnapshotVersionMax, 1, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.SetFull(true)
	if _, err := sink.Write([]byte("state")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a snapshot begun before the disk filled wrote on: %v", err)
	}
	_ = sink.Cancel()
	d.SetFull(false)
	if err := stable.SetUint64([]byte("k"), 7); err != nil {
		t.Fatalf("a freed disk still refuses: %v", err)
	}
	if got := d.Injected()["full"]; got != 6 {
		t.Errorf("injected full = %d, want 6", got)
	}
}
