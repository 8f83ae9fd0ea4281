package coordinator_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A cluster upgraded from before teams needs no migration: its log holds
// client tokens and jobs with no team (the entries below are written as
// the coordinator wrote them then), and they belong to default, whether a
// replica replays them or restores a snapshot of them.
func TestStateFromBeforeTeamsBelongsToDefault(t *testing.T) {
	minted, err := auth.Mint(api.PrefixClient)
	if err != nil {
		t.Fatal(err)
	}
	entries := []struct {
		typ  command.Type
		body string
	}{
		{command.TypeCreateToken, fmt.Sprintf(`{"credential":{"id":%q,"kind":"client","name":"alice","roles":["submit"],"hash":%q,"created_at":"2026-12-01T00:00:00Z","created_by":"admin"},"now":"2026-12-01T00:00:00Z"}`, minted.Token.ID, minted.Hash)},
		{command.TypeSubmitJob, `{"job_id":"jold","task_ids":["jold-0"],"spec":{"executor":"exec","config":{"command":"true"}},"created_by":"alice","now":"2026-12-01T00:00:01Z"}`},
	}
	s := state.New()
	for _, e := range entries {
		c, err := command.Decode(append([]byte{byte(e.typ)}, e.body...))
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := s.Apply(c).(state.Result); !ok || r.Err() != nil {
			t.Fatalf("apply %T: %v", c, r.Err())
		}
	}
	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	restored := state.New()
	if err := restored.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*state.Store{"replayed": s, "restored": restored} {
		p, err := auth.Authenticator{Creds: st}.Authenticate([]string{"Bearer " + minted.Token.String()}, netip.MustParseAddr("10.0.0.1"), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
		if err != nil || p.Team != api.DefaultTeam {
			t.Errorf("%s: the old token's principal: %+v %v, want team default", name, p, err)
		}
		job, err := st.Job("jold")
		if err != nil || view.Job(job).Team != api.DefaultTeam {
			t.Errorf("%s: the old job: team %q %v, want default", name, view.Job(job).Team, err)
		}
		if tok, _ := st.Credential(minted.Token.ID); view.Token(tok).Team != api.DefaultTeam {
			t.Errorf("%s: the old token lists team %q", name, view.Token(tok).Team)
		}
		teams := st.Teams()
		if len(teams) != 1 || teams[0].Team.Name != api.DefaultTeam || teams[0].Usage.PendingTasks != 1 {
			t.Errorf("%s: teams %+v, want default with the old job pending", name, teams)
		}
	}
}
