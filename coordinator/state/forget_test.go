package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func forget(id string) command.ForgetWorker {
	return command.ForgetWorker{WorkerID: id, By: "ops", Source: "10.0.0.9", Now: at(20)}
}

// An admin forgets a revoked, offline or unapproved worker that holds no
// task: it leaves the registry, its credential and its groups, and the
// audit log says who forgot it. Anything else is refused and changes
// nothing.
func TestForgetWorker(t *testing.T) {
	offline := func(id string) command.SetWorkerStatus {
		return command.SetWorkerStatus{WorkerID: id, Status: api.WorkerOffline, Now: at(5)}
	}
	joinToken := command.CreateToken{Credential: command.CredentialRecord{ID: "jt", Kind: "join", Name: "jt", Hash: "h-jt", RequiresApproval: true}, Now: at(0)}
	pending := register("w1", "GPU-1")
	pending.TokenID = "jt"
	group := command.CreateGroup{GroupID: "g", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(1)}
	cases := []struct {
		name string
		log  []command.Command
		want error
	}{
		{"revoked", []command.Command{register("w1", "GPU-1"), group, command.RevokeWorker{WorkerID: "w1", By: "admin", Now: at(5)}}, nil},
		{"offline", []command.Command{register("w1", "GPU-1"), group, offline("w1")}, nil},
		{"never approved", []command.Command{joinToken, pending}, nil},
		{"unknown", []command.Command{register("w2")}, ErrNotFound},
		{"ready", []command.Command{register("w1", "GPU-1")}, ErrConflict},
		{"draining", []command.Command{register("w1"), control("w1", command.ActionDrain, 100)}, ErrConflict},
		{"offline with a task", []command.Command{register("w1"), submit("j", 1, 0),
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}, offline("w1")}, ErrConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, c.log...)
			before := snapshotBytes(t, s)
			r := apply(t, s, forget("w1"))
			if !errors.Is(r.Err(), c.want) || (c.want == nil) != (r.Err() == nil) {
				t.Fatalf("forget: %v, want %v", r.Err(), c.want)
			}
			if c.want != nil {
				if after := snapshotBytes(t, s); string(after) != string(before) {
					t.Fatal("a refused forget changed the state")
				}
				return
			}
			if _, err := s.Worker("w1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the forgotten worker reads: %v", err)
			}
			if _, ok := s.Credential("cred-w1"); ok {
				t.Fatal("the forgotten worker's credential is kept")
			}
			if g, err := s.Group("g"); err == nil && slices.ContainsFunc(g.Group.Members, func(m command.GroupMember) bool { return m.ID == "w1" }) {
				t.Fatal("the forgotten worker is still a group member")
			}
			ev := s.Audit(audit.Filter{Kinds: []string{"worker.forgotten"}})
			if len(ev) != 1 || ev[0].Actor != "ops" || ev[0].WorkerID != "w1" || ev[0].Source != "10.0.0.9" {
				t.Fatalf("audit: %+v", ev)
			}
			// The id is free again: a new registration starts afresh.
			mustApply(t, s, register("w1"))
			if w, _ := s.Worker("w1"); w.Worker.Status != workerReady || len(w.Groups) != 0 {
				t.Fatalf("re-registered: %+v", w)
			}
			roundTrip(t, s)
		})
	}
}
