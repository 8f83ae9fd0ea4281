package coordinator_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// storedOutput is a job's whole output as a node's store holds it.
func storedOutput(n *coordinatortest.Node, jobID string) []string {
	s := n.Server()
	if s == nil {
		return nil
	}
	var out []string
	var cursor state.LogCursor
	for {
		p, err := s.Store().LogsPage(jobID, cursor, 0)
		if err != nil {
			return nil
		}
		for _, l := range p.Lines {
			out = append(out, l.Data)
		}
		if cursor = p.Next; !p.More {
			return out
		}
	}
}

// Output written before the leader stops is served by the new leader; a
// follow stream opened through a follower carries on across the failover;
// and a node brought back after the log it missed was compacted installs
// the leader's snapshot and serves the output from it, as does a node
// restarted on its own snapshot.
func TestOutputSurvivesFailoverAndSnapshots(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		// Keep 16 entries after a snapshot, so that a node stopped for
		// longer catches up from the snapshot, not from the log.
		cfg.RaftSnapshotThreshold = 32
	}})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	reg, err := c.Client(c.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	worker := c.Client(reg.WorkerToken)
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	var want []string
	seq := int64(0)
	write := func(data string) {
		t.Helper()
		seq++
		if err := worker.AppendLogs(ctx, acq.Task.ID, api.LogsRequest{AttemptID: acq.Task.AttemptID, Stream: "stdout", Seq: seq, Data: data}); err != nil {
			t.Fatal(err)
		}
		want = append(want, data)
	}
	write("before 1\n")
	write("before 2\n")

	leader := c.WaitLeader(15 * time.Second)
	var follower *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
			break
		}
	}
	coordinatortest.WaitFor(t, 10*time.Second, "the follower to apply the output", func() bool {
		return slices.Equal(storedOutput(follower, job.ID), want)
	})
	if err := follower.Server().Node().Snapshot(); err != nil {
		t.Fatal(err)
	}

	// A follow stream through the follower alone (relayed to the leader).
	via, err := client.New(client.Config{Addrs: []string{follower.URL}, Token: c.AdminToken, MaxRetryWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	followed := make(chan error, 1)
	go func() {
		followed <- via.Logs(ctx, job.ID, true, func(e api.LogEntry) error { lines <- e.Data; return nil })
	}()
	var got []string
	for len(got) < 2 {
		select {
		case l := <-lines:
			got = append(got, l)
		case err := <-followed:
			t.Fatalf("follow ended early: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("the follow stream delivered nothing")
		}
	}

	c.Stop(leader)
	next := c.WaitLeader(30 * time.Second)
	if !slices.Equal(storedOutput(next, job.ID), want) {
		t.Errorf("new leader %s holds %q, want %q", next.ID, storedOutput(next, job.ID), want)
	}
	// Enough entries that the stopped node's missing ones are compacted
	// away once the new leader snapshots.
	for i := range 40 {
		write(fmt.Sprintf("after %02d\n", i))
	}
	if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID, SubmissionID: "fin", ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	if err := next.Server().Node().Snapshot(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-followed:
		if err != nil {
			t.Fatalf("follow across the failover: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the follow stream did not end with the job")
	}
	close(lines)
	for l := range lines {
		got = append(got, l)
	}
	if !slices.Equal(got, want) {
		t.Errorf("followed across the failover: %q\nwant %q", got, want)
	}

	// The old leader comes back behind the compacted log: it installs
	// the new leader's snapshot.
	c.Restart(leader)
	// (Raft records the snapshot it installed once the restore is done.)
	coordinatortest.WaitFor(t, 30*time.Second, "the old leader to catch up from a snapshot", func() bool {
		s := leader.Server()
		return s != nil && s.Node().Stats()["last_snapshot_index"] != "0" && slices.Equal(storedOutput(leader, job.ID), want)
	})
	// A node restarted on its own snapshot rebuilds its output file.
	c.Stop(follower)
	c.Restart(follower)
	coordinatortest.WaitFor(t, 30*time.Second, "the restarted follower to serve the output", func() bool {
		return slices.Equal(storedOutput(follower, job.ID), want)
	})
}

// The operator's backup carries task output: a job collected after the
// save comes back with its output on restore; a damaged backup is refused.
func TestOperatorSnapshotCarriesOutput(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	job := runToEnd(t, admin, h.Client(t, reg.WorkerToken), "saved")
	var snap bytes.Buffer
	if _, err := admin.SaveSnapshot(ctx, &snap); err != nil {
		t.Fatal(err)
	}
	zero := time.Duration(0)
	if n, err := admin.CollectGarbage(ctx, &zero); err != nil || n != 1 {
		t.Fatalf("gc: %d, %v", n, err)
	}
	cut := snap.Bytes()[:snap.Len()-2]
	if err := admin.RestoreSnapshot(ctx, bytes.NewReader(cut)); !client.IsCode(err, api.CodeInvalidArgument) {
		t.Fatalf("restoring a cut backup: %v, want invalid_argument", err)
	}
	if err := admin.RestoreSnapshot(ctx, bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := admin.Logs(ctx, job, false, func(e api.LogEntry) error { lines = append(lines, e.Data); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lines, []string{"out\n"}) {
		t.Errorf("output after restoring the backup: %q", lines)
	}
}
