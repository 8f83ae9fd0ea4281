package state

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

func teamSettings(weight, quota int64) command.TeamSettings {
	return command.TeamSettings{WeightCenti: weight, QuotaCentiGPUs: quota}
}

func inTeam(c command.SubmitJob, team string) command.SubmitJob {
	c.Team = team
	return c
}

// Team default exists before anything is written, cannot be deleted and
// can be changed; a created team is listed, changed field by field and
// deleted; each write is audited with its team.
func TestTeamLifecycle(t *testing.T) {
	s := New()
	ts := s.Teams()
	if len(ts) != 1 || ts[0].Team.Name != command.DefaultTeam || ts[0].Team.Settings.WeightCenti != teams.DefaultWeightCenti {
		t.Fatalf("a fresh store's teams: %+v", ts)
	}
	limit := int64(400)
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: command.TeamSettings{WeightCenti: 200, QuotaCentiGPUs: 800, BorrowLimitCenti: &limit}, By: "admin", Now: at(1)})
	q := int64(1600)
	mustApply(t, s, command.UpdateTeam{Name: "vision", QuotaCentiGPUs: &q, By: "ops", Now: at(2)})
	rec, err := s.TeamByName("vision")
	if err != nil {
		t.Fatal(err)
	}
	got := rec.Team
	if got.Settings.WeightCenti != 200 || got.Settings.QuotaCentiGPUs != 1600 || got.Settings.BorrowLimitCenti == nil || *got.Settings.BorrowLimitCenti != 400 ||
		got.CreatedBy != "admin" || got.UpdatedBy != "ops" || !got.UpdatedAt.Equal(at(2)) {
		t.Fatalf("after the update: %+v", got)
	}
	mustApply(t, s, command.UpdateTeam{Name: "vision", ClearBorrowLimit: true, By: "ops", Now: at(3)})
	if rec, _ := s.TeamByName("vision"); rec.Team.Settings.BorrowLimitCenti != nil {
		t.Fatalf("the borrow limit was not lifted: %+v", rec.Team.Settings)
	}
	w := int64(300)
	mustApply(t, s, command.UpdateTeam{Name: command.DefaultTeam, WeightCenti: &w, By: "ops", Now: at(4)})
	if rec, _ := s.TeamByName(command.DefaultTeam); rec.Team.Settings.WeightCenti != 300 {
		t.Fatalf("default's weight: %+v", rec.Team.Settings)
	}
	if names := teamNames(s.Teams()); names != "default,vision" {
		t.Fatalf("teams %s", names)
	}
	mustApply(t, s, command.DeleteTeam{Name: "vision", By: "admin", Now: at(5)})
	if _, err := s.TeamByName("vision"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a deleted team reads: %v", err)
	}
	kinds := map[string]string{}
	for _, ev := range s.Audit(audit.Filter{}) {
		kinds[ev.Kind] = ev.Team
	}
	for _, k := range []string{"team.created", "team.updated", "team.deleted"} {
		if kinds[k] == "" {
			t.Errorf("no %s event naming its team: %v", k, kinds)
		}
	}
}

func teamNames(rs []TeamRecord) string {
	var b bytes.Buffer
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.Team.Name)
	}
	return b.String()
}

// Every refused team write changes nothing and is not audited.
func TestTeamWritesRefused(t *testing.T) {
	s := New()
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(100, 0), Now: at(1)},
		register("w1", "GPU-1"), inTeam(submit("j", 1, 1), "vision"))
	neg, huge := int64(-1), int64(teams.MaxCentiGPUs+1)
	cases := []struct {
		name string
		cmd  command.Command
		want error
	}{
		{"create an existing team", command.CreateTeam{Name: "vision", Settings: teamSettings(100, 0)}, ErrConflict},
		{"create default", command.CreateTeam{Name: command.DefaultTeam, Settings: teamSettings(100, 0)}, ErrConflict},
		{"zero weight", command.CreateTeam{Name: "a", Settings: teamSettings(0, 0)}, ErrInvalid},
		{"weight past the bound", command.CreateTeam{Name: "a", Settings: teamSettings(teams.MaxWeightCenti+1, 0)}, ErrInvalid},
		{"negative quota", command.CreateTeam{Name: "a", Settings: teamSettings(100, -1)}, ErrInvalid},
		{"negative borrow limit", command.CreateTeam{Name: "a", Settings: command.TeamSettings{WeightCenti: 100, BorrowLimitCenti: &neg}}, ErrInvalid},
		{"quota past the bound", command.UpdateTeam{Name: "vision", QuotaCentiGPUs: &huge}, ErrInvalid},
		{"limit set and cleared", command.UpdateTeam{Name: "vision", BorrowLimitCenti: &huge, ClearBorrowLimit: true}, ErrInvalid},
		{"update an unknown team", command.UpdateTeam{Name: "nope"}, ErrNotFound},
		{"delete default", command.DeleteTeam{Name: command.DefaultTeam}, ErrConflict},
		{"delete a team with an unfinished job", command.DeleteTeam{Name: "vision"}, ErrConflict},
		{"delete an unknown team", command.DeleteTeam{Name: "nope"}, ErrNotFound},
		{"submit in an unknown team", inTeam(submit("k", 1, 0), "nope"), ErrNotFound},
		{"a client token in an unknown team", command.CreateToken{Credential: command.CredentialRecord{ID: "t1", Kind: creds.KindClient, Name: "n", Hash: "h", Team: "nope"}}, ErrNotFound},
		{"a join token in a team", command.CreateToken{Credential: command.CredentialRecord{ID: "t2", Kind: creds.KindJoin, Name: "n", Hash: "h", Team: "vision"}}, ErrInvalid},
	}
	for _, c := range cases {
		before := snapshotOf(t, s)
		if err := apply(t, s, c.cmd).Err(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if !bytes.Equal(before, snapshotOf(t, s)) {
			t.Errorf("%s: a refusal changed the state", c.name)
		}
	}
}

// Deleting a team whose jobs have all ended revokes its client tokens in
// the same write, so no credential is left acting for a team that is
// gone; other teams' tokens stay.
func TestDeleteTeamRevokesItsTokens(t *testing.T) {
	s := New()
	tok := func(id, team string) command.CreateToken {
		return command.CreateToken{Credential: command.CredentialRecord{ID: id, Kind: creds.KindClient, Name: id, Roles: []string{"submit"}, Hash: "h-" + id, Team: team}, Now: at(1)}
	}
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(100, 0), Now: at(1)},
		tok("a", "vision"), tok("b", ""), inTeam(submit("j", 1, 0), "vision"),
		command.CancelJob{JobID: "j", By: "admin", Now: at(2)},
		command.DeleteTeam{Name: "vision", By: "admin", Now: at(3)})
	a, _ := s.Credential("a")
	b, _ := s.Credential("b")
	if !a.Revoked || a.RevokedBy != "admin" || b.Revoked {
		t.Fatalf("after the delete: a revoked %v by %q, b revoked %v", a.Revoked, a.RevokedBy, b.Revoked)
	}
}

// A team's live figures: GPUs held in hundredths (a whole GPU 100, a MIG
// 3g.40gb of an 80 GB GPU its memory's fraction rounded up, a 20 GiB
// share likewise), running and pending tasks; jobs from before teams
// count for default.
func TestTeamUsage(t *testing.T) {
	s := New()
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(100, 400), Now: at(1)}, migWorker("w1"))
	whole := inTeam(submit("whole", 1, 1), "vision")
	mig := inTeam(migJob("mig", "3g.40gb", 1, 1), "vision")
	share := inTeam(submit("share", 1, 1), "vision")
	share.Spec.Resources.GPUSharing = "unenforced"
	share.Spec.Resources.GPUMemoryMiB = 20480
	old := submit("old", 2, 0) // no team: written before teams
	mustApply(t, s, whole, mig, old,
		command.AssignTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-0"}, Now: at(2)},
		command.AssignTask{TaskID: "mig-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"MIG-a"}, Now: at(2)},
		command.AssignTask{TaskID: "old-a", WorkerID: "w1", AttemptID: "a3", Now: at(2)},
		share)
	// The share's GPU: a second worker with a whole GPU of 81,559 MiB.
	mustApply(t, s, register("w2", "GPU-9"), command.AssignTask{TaskID: "share-a", WorkerID: "w2", AttemptID: "a4", Devices: []string{"GPU-9"}, Now: at(3)})
	byName := map[string]TeamUsage{}
	for _, r := range s.Teams() {
		byName[r.Team.Name] = r.Usage
	}
	// 100 + ceil(100·40448/81559)=50 + ceil(100·20480/81559)=26.
	if got, want := byName["vision"], (TeamUsage{CentiGPUsInUse: 176, RunningTasks: 3}); got != want {
		t.Errorf("vision: %+v, want %+v", got, want)
	}
	if got, want := byName[command.DefaultTeam], (TeamUsage{RunningTasks: 1, PendingTasks: 1}); got != want {
		t.Errorf("default: %+v, want %+v", got, want)
	}
}

// Teams survive a snapshot, and a snapshot written before teams (no team
// record, jobs and tokens without one) restores with everything in
// default.
func TestTeamsSurviveASnapshot(t *testing.T) {
	s := New()
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(150, 200), Now: at(1)},
		inTeam(submit("j", 1, 0), "vision"), submit("old", 1, 0))
	r := restored(t, s)
	if bad := stateDiffs(s, r, at(9)); len(bad) > 0 {
		t.Fatalf("restored: %v", bad)
	}
	if rec, err := r.TeamByName("vision"); err != nil || rec.Team.Settings.WeightCenti != 150 || rec.Usage.PendingTasks != 1 {
		t.Fatalf("vision after restore: %+v %v", rec, err)
	}
	if rec, _ := r.TeamByName(command.DefaultTeam); rec.Usage.PendingTasks != 1 {
		t.Fatalf("the job from before teams is not default's: %+v", rec)
	}
}

func snapshotOf(t *testing.T, s *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// restored is a fresh store restored from a snapshot of s.
func restored(t *testing.T, s *Store) *Store {
	t.Helper()
	r := New()
	if err := r.Restore(bytes.NewReader(snapshotOf(t, s))); err != nil {
		t.Fatal(err)
	}
	return r
}
