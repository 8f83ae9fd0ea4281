package cluster

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// raftBatchingFSM is the FSM as hashicorp/raft's BatchingFSM would have
// it: every command its own log entry, and the entries raft hands over
// together applied under one lock (the store's Batch, built from the
// logs' bytes as they are).
type raftBatchingFSM struct{ *fsm.FSM }

func (f raftBatchingFSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	var entries [][]byte
	var at []int
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			entries = append(entries, l.Data)
			at = append(at, i)
		}
	}
	if len(entries) == 0 {
		return out
	}
	results, _ := f.Store().Apply(command.Batch{Entries: entries}).([]state.Result)
	for k, i := range at {
		out[i] = results[k]
	}
	return out
}

var _ raft.BatchingFSM = raftBatchingFSM{}

// BenchmarkGroupCommit compares, on one node over its bolt log, the two
// ways of committing a burst of writes together: this package's batcher,
// which packs the commands proposed meanwhile into one framed Batch entry
// (what the coordinator runs), and raft's own path, one log entry per
// command, group-committed by raft's leader loop and applied through
// BatchingFSM. Each op is one job submit, proposed by 64 writers at once.
func BenchmarkGroupCommit(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		for _, mode := range []string{"batcher", "raft-batching-fsm"} {
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, mode), func(b *testing.B) {
				benchGroupCommit(b, nodes, mode == "batcher")
			})
		}
	}
}

// groupCommitCluster opens nodes nodes (one in process, or several over
// loopback TCP), every one's FSM batching as raft's BatchingFSM unless
// packed, and returns the leader.
func groupCommitCluster(b *testing.B, nodes int, packed bool) *Node {
	var all []*Node
	var members []Server
	for i := range nodes {
		var f raft.FSM = fsm.New(state.New())
		if !packed {
			f = raftBatchingFSM{fsm.New(state.New())}
		}
		cfg := Config{NodeID: fmt.Sprintf("n%d", i+1), DataDir: b.TempDir(), FSM: f}
		if nodes == 1 {
			cfg.InProcess = true
		} else {
			cfg.RaftAddr = "127.0.0.1:0"
		}
		n, err := Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = n.Shutdown() })
		all = append(all, n)
		members = append(members, Server{ID: cfg.NodeID, Address: n.Addr()})
	}
	for _, n := range all {
		if err := n.BootstrapWith(members); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range all {
			if n.IsLeader() {
				return n
			}
		}
		<-time.After(10 * time.Millisecond)
	}
	b.Fatal("no leader")
	return nil
}

func benchGroupCommit(b *testing.B, nodes int, packed bool) {
	n := groupCommitCluster(b, nodes, packed)
	var seq atomic.Int64
	b.SetParallelism(32) // 64 writers on this machine's 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			id := fmt.Sprintf("j%d", i)
			entry, _, err := command.EncodeSubmit(command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, CreatedBy: "bench", Now: time.Unix(1, 0).UTC(),
				Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}})
			if err != nil {
				b.Error(err)
				return
			}
			var out any
			if packed {
				out, err = n.Apply(b.Context(), entry.Entry())
			} else {
				f := n.raft.Apply(entry.Entry(), 10*time.Second)
				if err = f.Error(); err == nil {
					out = f.Response()
				}
			}
			if err != nil {
				b.Error(err)
				return
			}
			if r, ok := out.(state.Result); !ok || r.Err() != nil {
				b.Errorf("submit answered %#v", out)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64(b.N)/float64(max(atoi(n.Stats()["last_log_index"]), 1)), "writes/entry")
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}
