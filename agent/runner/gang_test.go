package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A gang member starts its process only after rendezvous, with the
// gang's variables in its environment over the job's own; rank 0 gives
// the port it leased for the master.
func TestGangMemberStartsAfterRendezvousWithTheGangsEnvironment(t *testing.T) {
	r, rec, _ := newRunner(t, SharedUser{})
	rec.setPeers(
		api.GangPeer{Rank: 0, TaskID: "t0", WorkerID: "w1", Address: "10.0.0.1", Port: 29500},
		api.GangPeer{Rank: 1, TaskID: "t1", WorkerID: "w1", Address: "10.0.0.1"},
		api.GangPeer{Rank: 2, TaskID: "t2", WorkerID: "w2", Address: "10.0.0.2"},
	)
	a := shellTask(t, `echo "$MASTER_ADDR:$MASTER_PORT $WORLD_SIZE $RANK $NODE_RANK $LOCAL_RANK $LOCAL_WORLD_SIZE $PET_NNODES $PET_NODE_RANK $PET_NPROC_PER_NODE"`, map[string]string{"RANK": "99"})
	a.Gang = &api.GangMember{Size: 3, Rank: 2}
	out := r.Run(context.Background(), a)
	if out.ExitCode != 0 || out.Failed {
		t.Fatalf("outcome %+v", out)
	}
	stdout, _, _ := rec.out(a.ID)
	if want := "10.0.0.1:29500 3 2 1 0 1 3 2 1"; strings.TrimSpace(stdout) != want {
		t.Fatalf("the member saw %q, want %q", strings.TrimSpace(stdout), want)
	}
	if len(rec.joined) != 1 || rec.joined[0].AttemptID != a.AttemptID || rec.joined[0].Port != 0 || rec.joined[0].Address != "127.0.0.1" {
		t.Fatalf("rendezvous calls: %+v", rec.joined)
	}

	lead := shellTask(t, `true`, nil)
	lead.Gang = &api.GangMember{Size: 3, Rank: 0}
	if out := r.Run(context.Background(), lead); out.ExitCode != 0 {
		t.Fatalf("rank 0: %+v", out)
	}
	if j := rec.joined[1]; j.Port <= 0 || j.Port > 65535 {
		t.Fatalf("rank 0 gave port %d, want the one it leased", j.Port)
	}
}

// A member whose gang never meets is stopped while it waits, and never
// starts its process.
func TestGangMemberStoppedWhileWaiting(t *testing.T) {
	r, rec, _ := newRunner(t, SharedUser{})
	a := shellTask(t, `echo started`, nil)
	a.Gang = &api.GangMember{Size: 2, Rank: 1}
	done := make(chan Outcome, 1)
	go func() { done <- r.Run(context.Background(), a) }()
	<-rec.waiting // in rendezvous, which waits for a gang that never meets
	if !r.Cancel(a.AttemptID) {
		t.Fatal("the attempt waiting in rendezvous is not running")
	}
	out := <-done
	if !out.Failed || out.End != EndCancelled {
		t.Fatalf("outcome %+v, want cancelled before it started", out)
	}
	if stdout, _, _ := rec.out(a.ID); stdout != "" {
		t.Fatalf("the process ran: %q", stdout)
	}
}

// An attempt handed to Run while it runs is not run twice.
func TestRunIgnoresAnAttemptItRunsAlready(t *testing.T) {
	r, rec, _ := newRunner(t, SharedUser{})
	a := shellTask(t, `echo once`, nil)
	a.Gang = &api.GangMember{Size: 2, Rank: 1} // held in rendezvous until setPeers
	done := make(chan Outcome, 1)
	go func() { done <- r.Run(context.Background(), a) }()
	<-rec.waiting // the first Run holds the attempt, waiting for its gang
	if out := r.Run(context.Background(), a); out.End != EndDuplicate {
		t.Fatalf("the second Run: %+v, want a duplicate", out)
	}
	rec.setPeers(api.GangPeer{Rank: 0, WorkerID: "w1", Address: "10.0.0.1", Port: 1}, api.GangPeer{Rank: 1, WorkerID: "w1", Address: "10.0.0.1"})
	if out := <-done; out.ExitCode != 0 {
		t.Fatalf("the first Run: %+v", out)
	}
	if stdout, _, _ := rec.out(a.ID); strings.Count(stdout, "once") != 1 {
		t.Fatalf("stdout %q, want one run", stdout)
	}
}
