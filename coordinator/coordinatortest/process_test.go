package coordinatortest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestMain(m *testing.M) {
	ServeChild()
	os.Exit(m.Run())
}

// A cluster of coordinator processes survives SIGKILL of its leader and
// keeps what it acknowledged; the killed node restarts on its data dir and
// converges.
func TestProcessClusterSurvivesSIGKILL(t *testing.T) {
	c := StartCluster(t, 3, Options{Processes: true})
	admin := c.Client(c.AdminToken)
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	old := c.WaitLeader(10 * time.Second)
	c.Kill(old)
	if old.Running() {
		t.Fatal("a killed node still runs")
	}
	WaitFor(t, 15*time.Second, "a new leader", func() bool { l := c.Leader(); return l != nil && l != old })
	if _, err := admin.Job(t.Context(), job.ID); err != nil {
		t.Fatalf("the acknowledged job after the leader's SIGKILL: %v", err)
	}
	c.Restart(old)
	if !old.Running() {
		t.Fatal("the restarted node is not running")
	}
	c.Converged(20 * time.Second)
	if exits := c.Exits(); len(exits) != 0 {
		t.Fatalf("processes ended by themselves: %+v", exits)
	}
}

// The control commands reach the process: a clock step, disk faults and
// their counts, and a clear refusal of a bad command.
func TestProcessControl(t *testing.T) {
	c := StartCluster(t, 3, Options{Processes: true})
	l := c.WaitLeader(10 * time.Second)
	if v, err := l.Control("leader"); err != nil || v != "true" {
		t.Fatalf("leader: %q, %v", v, err)
	}
	// What a report of a node that did not catch up shows of it.
	if v, err := l.Control("raft"); err != nil || !strings.Contains(v, "state=Leader") || !strings.Contains(v, "applied_index=") {
		t.Fatalf("raft stats: %q %v", v, err)
	}
	stacks := filepath.Join(t.TempDir(), "stacks")
	if _, err := l.Control("stacks " + stacks); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(stacks); err != nil || !strings.Contains(string(b), "goroutine ") {
		t.Fatalf("stacks: %d bytes, %v", len(b), err)
	}
	if v, err := l.Control("clock -45s"); err != nil || v != "-45s" {
		t.Fatalf("clock step: %q, %v", v, err)
	}
	if _, err := l.Control("fail-writes 1000"); err != nil {
		t.Fatal(err)
	}
	admin := c.Client(c.AdminToken)
	// Every log write the old leader makes fails, so it steps down; the
	// cluster carries on under another leader, and the submit, whose
	// outcome the failed write left unknown, is resent under its key.
	if _, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), IdempotencyKey: "disk-fault"}); err != nil {
		t.Fatalf("submit while the leader's disk fails: %v", err)
	}
	WaitFor(t, 10*time.Second, "the old leader to count its failed writes", func() bool {
		v, err := l.Control("injected")
		return err == nil && strings.Contains(v, "write=")
	})
	if _, err := l.Control("fail-writes 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Control("nonsense"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("a bad command: %v", err)
	}
	c.Converged(20 * time.Second)
	c.Kill(l)
	if _, err := l.Control("leader"); err == nil {
		t.Fatal("a killed node answered")
	}
}
