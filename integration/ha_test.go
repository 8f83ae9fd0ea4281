package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func startCluster(t *testing.T, tweak func(*coordinator.Config)) *coordinatortest.Cluster {
	return coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = 100 * time.Millisecond
		if tweak != nil {
			tweak(c)
		}
	}})
}

// submitAll submits n small jobs with idempotency keys (so a retry after a
// lost answer cannot create a second job) and returns their ids: each id
// is an acknowledged write that must never be lost.
func submitAll(t *testing.T, c *client.Client, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		spec := execSpec(fmt.Sprintf("echo %s-%d", prefix, i), 0)
		spec.IdempotencyKey = fmt.Sprintf("%s-%d", prefix, i)
		spec.LeaseSeconds = 5
		var job api.Job
		var err error
		for try := 0; try < 5; try++ {
			if job, err = c.SubmitJob(context.Background(), spec); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("submit %s-%d: %v", prefix, i, err)
		}
		ids[i] = job.ID
	}
	return ids
}

// checkInvariants asserts, for every acknowledged job: it exists, it
// ended, and no task was held by two live attempts or finished twice.
func checkInvariants(t *testing.T, c *client.Client, ids []string, wantState string) {
	t.Helper()
	for _, id := range ids {
		j, err := c.Job(context.Background(), id)
		if err != nil {
			t.Fatalf("acknowledged job %s: %v", id, err)
		}
		if j.State != wantState {
			t.Fatalf("job %s is %s, want %s; tasks: %+v", id, j.State, wantState, j.Tasks)
		}
		for _, task := range j.Tasks {
			live, won := 0, 0
			for _, a := range task.Attempts {
				switch a.State {
				case api.TaskAssigned, api.TaskRunning:
					live++
				case api.TaskSucceeded:
					won++
					if task.SubmittedBy != a.WorkerID {
						t.Fatalf("task %s finished by %s but its winning attempt ran on %s", task.ID, task.SubmittedBy, a.WorkerID)
					}
				}
			}
			if live > 1 || won > 1 || (task.State == api.TaskSucceeded && won != 1) {
				t.Fatalf("task %s: %d live and %d succeeded attempts: %+v", task.ID, live, won, task.Attempts)
			}
		}
	}
}

func waitAll(t *testing.T, c *client.Client, ids []string) {
	t.Helper()
	coordinatortest.WaitFor(t, 60*time.Second, "every job to end", func() bool {
		for _, id := range ids {
			j, err := c.Job(context.Background(), id)
			if err != nil || !terminal(j) {
				return false
			}
		}
		return true
	})
}

func TestHAKillLeaderDuringWorkload(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	urls := strings.Join(c.URLs(), ",")
	startAgent(t, urls, c.JoinToken, "gpu-a", "dgxh100")
	startAgent(t, urls, c.JoinToken, "gpu-b", "dgxa100")

	first := submitAll(t, admin, "before", 30)
	coordinatortest.WaitFor(t, 30*time.Second, "some jobs to finish", func() bool {
		j, err := admin.Job(context.Background(), first[9])
		return err == nil && terminal(j)
	})
	old := c.Leader()
	killed := time.Now()
	c.Stop(old)
	next := c.WaitLeader(15 * time.Second)
	t.Logf("leader %s killed; %s took office after %v", old.ID, next.ID, time.Since(killed).Round(time.Millisecond))

	second := submitAll(t, admin, "after", 30)
	all := append(first, second...)
	waitAll(t, admin, all)
	checkInvariants(t, admin, all, api.TaskSucceeded)

	c.Restart(old)
	c.Converged(30 * time.Second)
	checkInvariants(t, c.Client(c.AdminToken), all, api.TaskSucceeded)
}

func TestHAIsolatedLeaderStepsDownAndCatchesUp(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	urls := strings.Join(c.URLs(), ",")
	startAgent(t, urls, c.JoinToken, "gpu-a", "dgxh100")

	before := submitAll(t, admin, "before", 5)
	old := c.Leader()
	c.Partition(old)
	var next *coordinatortest.Node
	coordinatortest.WaitFor(t, 15*time.Second, "the majority to elect a new leader", func() bool {
		next = c.Leader()
		return next != nil && next != old
	})
	coordinatortest.WaitFor(t, 15*time.Second, "the isolated leader to step down", func() bool {
		return !old.Server().Node().IsLeader()
	})
	during := submitAll(t, admin, "during", 10)
	waitAll(t, admin, append(before, during...))

	c.Heal()
	c.Converged(30 * time.Second)
	checkInvariants(t, admin, append(before, during...), api.TaskSucceeded)
	// The healed node answers with the majority's state, forwarding to
	// the leader it now follows.
	solo, err := client.New(client.Config{Addrs: []string{old.URL}, Token: c.AdminToken})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, solo, during, api.TaskSucceeded)
}

func TestHALaggingFollowerCatchesUpBySnapshot(t *testing.T) {
	c := startCluster(t, func(cfg *coordinator.Config) {
		cfg.RaftSnapshotThreshold = 32
		cfg.RaftSnapshotInterval = 50 * time.Millisecond
	})
	admin := c.Client(c.AdminToken)
	leader := c.Leader()
	var lagger *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			lagger = n
			break
		}
	}
	c.Partition(lagger)
	ids := submitAll(t, admin, "lag", 120) // pending: no agents
	coordinatortest.WaitFor(t, 30*time.Second, "the leader to compact its log past the follower", func() bool {
		idx, _ := strconv.Atoi(c.Leader().Server().Node().Stats()["last_snapshot_index"])
		last, _ := strconv.Atoi(lagger.Server().Node().Stats()["last_log_index"])
		return idx > last+64
	})
	// Raft records a snapshot's index before it compacts the log behind
	// it: healed in between, the follower could still be sent the entries
	// it lacks. Snapshots are taken one at a time, so one more asked for
	// and waited on means the last one's compaction is done.
	if err := c.Leader().Server().Node().Snapshot(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		t.Fatal(err)
	}
	c.Heal()
	c.Converged(30 * time.Second)
	// The leader's log no longer holds what the follower lacks, so it can
	// only catch up by installing a snapshot. Its state is swapped in
	// before Raft records that snapshot's index (the FSM returns memory in
	// between), which is why Converged can return first and the record is
	// waited for.
	coordinatortest.WaitFor(t, 10*time.Second, "the follower to record the snapshot it installed", func() bool {
		return lagger.Server().Node().Stats()["last_snapshot_index"] != "0"
	})
	checkInvariants(t, admin, ids, api.TaskPending)
}

func TestHAFullRestartFromDisk(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	ag := startAgent(t, strings.Join(c.URLs(), ","), c.JoinToken, "gpu-a", "dgxh100")
	ids := submitAll(t, admin, "persist", 10)
	waitAll(t, admin, ids)
	if err := ag.stop(); err != nil {
		t.Fatal(err)
	}
	// Let the leader notice the agent is gone, so the state is quiet.
	coordinatortest.WaitFor(t, 30*time.Second, "the stopped worker to go offline", func() bool {
		ws, err := admin.Workers(context.Background())
		return err == nil && len(ws) == 1 && ws[0].Status == api.WorkerOffline
	})
	before := c.Converged(30 * time.Second)

	var wg sync.WaitGroup
	for _, n := range c.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.Stop(n) }()
	}
	wg.Wait()
	for _, n := range c.Nodes {
		c.Restart(n)
	}
	c.WaitLeader(20 * time.Second)
	after := c.Converged(30 * time.Second)
	// The nodes table records the HTTP address of every server that has
	// led; the restart may elect one that had not. Everything else must be
	// exactly as it was.
	if before, after = withoutNodes(t, before), withoutNodes(t, after); !bytes.Equal(before, after) {
		t.Fatalf("state changed across a full restart:\n%s\n---\n%s", before, after)
	}
	checkInvariants(t, c.Client(c.AdminToken), ids, api.TaskSucceeded)
}

func TestHAPausedWorkerLateFinishIsStale(t *testing.T) {
	c := startCluster(t, nil)
	admin := c.Client(c.AdminToken)
	leader := c.Leader()
	var follower *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
		}
	}
	ctx := t.Context()
	// Both workers talk to a follower only: everything is forwarded.
	join, _ := client.New(client.Config{Addrs: []string{follower.URL}, Token: c.JoinToken})
	worker := func(id string) *client.Client {
		r, err := join.Register(ctx, api.RegisterRequest{WorkerID: id, Capabilities: []string{"*"}, Executors: []string{"exec"}})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := client.New(client.Config{Addrs: []string{follower.URL}, Token: r.WorkerToken})
		return w
	}
	paused, rescuer := worker("paused"), worker("rescuer")
	spec := execSpec("true", 0)
	spec.LeaseSeconds = 1
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	a1, err := paused.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || a1.Task == nil {
		t.Fatalf("paused worker acquire: %v", err)
	}
	if err := paused.Start(ctx, a1.Task.ID, a1.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	// The paused worker sends nothing; its lease lapses and the task is
	// handed to the rescuer.
	a2, err := rescuer.Acquire(ctx, api.AcquireRequest{WaitSeconds: 10})
	if err != nil || a2.Task == nil || a2.Task.ID != a1.Task.ID || a2.Task.AttemptID == a1.Task.AttemptID {
		t.Fatalf("rescuer acquire: %+v %v", a2.Task, err)
	}
	if _, err := paused.Finish(ctx, a1.Task.ID, api.FinishRequest{AttemptID: a1.Task.AttemptID, ExitCode: 0}); !client.IsCode(err, api.CodeStaleAttempt) {
		t.Fatalf("late finish: %v, want stale_attempt", err)
	}
	if _, err := rescuer.Finish(ctx, a2.Task.ID, api.FinishRequest{AttemptID: a2.Task.AttemptID, ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	c.Converged(20 * time.Second)
	checkInvariants(t, admin, []string{job.ID}, api.TaskSucceeded)
}

func withoutNodes(t *testing.T, snap []byte) []byte {
	t.Helper()
	s := state.New()
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.Capture().WithoutNodes().Encode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
