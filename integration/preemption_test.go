//go:build cgo && linux

package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/preempt"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// checkpointedTrainer resumes from its checkpoint when one was staged
// (and then succeeds only if it holds what the first attempt saved);
// else it runs until SIGTERM, saves its step in its checkpoint
// directory, and exits 143.
const checkpointedTrainer = `
if [ -e "$GPULAYER_CHECKPOINT_DIR/state" ]; then
  echo "resumed at $(cat "$GPULAYER_CHECKPOINT_DIR/state")"
  [ "$(cat "$GPULAYER_CHECKPOINT_DIR/state")" = 41 ] && exit 0
  exit 5
fi
trap 'mkdir -p "$GPULAYER_CHECKPOINT_DIR/sub" && echo 41 > "$GPULAYER_CHECKPOINT_DIR/state" && echo saved; exit 143' TERM
echo up
while :; do sleep 0.1; done
`

// Preemption end to end, with a real coordinator and agent: team ml
// borrows all eight GPUs; team research, owed one, submits; ml's task is
// sent SIGTERM, writes its checkpoint and exits; the attempt ends
// preempted naming research's job and team; research's task runs on the
// freed GPUs; ml's next attempt finds its checkpoint staged at
// GPULAYER_CHECKPOINT_DIR and succeeds.
func TestPreemptionWithCheckpointEndToEnd(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = 100 * time.Millisecond
		c.Preemption = preempt.Config{Options: preemption.Options{MinRuntime: -1}, Interval: 200 * time.Millisecond}
	}})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "ml"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "research", Quota: api.QuotaGPUs(1)}); err != nil {
		t.Fatal(err)
	}
	teamClient := func(team string) *client.Client {
		tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: team + "-user", Roles: []string{api.RoleSubmit, api.RoleRead}, Team: team})
		if err != nil {
			t.Fatal(err)
		}
		return h.Client(t, tok.Token)
	}
	ml, research := teamClient("ml"), teamClient("research")
	startAgent(t, h.URL, h.JoinToken, "dgx", "dgxh100")

	spec := execSpec(checkpointedTrainer, 8)
	spec.MaxAttempts = 1 // a preempted attempt uses none
	grace := 20
	spec.PreemptionGraceSeconds = &grace
	spec.Checkpoint = &api.CheckpointSpec{Path: "ckpt"}
	trainer, err := ml.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, ml, trainer.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "ml's task to run")
	coordinatortest.WaitFor(t, 30*time.Second, "ml's task to write up", func() bool {
		return strings.Contains(logsOf(t, ml, trainer.ID), "up")
	})

	eval, err := research.SubmitJob(ctx, execSpec(`echo evaluated`, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, research, eval.ID, func(j api.Job) bool { return j.State == api.TaskSucceeded }, "research's task to run on the freed GPUs")
	done := waitJob(t, ml, trainer.ID, terminal, "ml's task to resume and end")
	tk := done.Tasks[0]
	if done.State != api.TaskSucceeded || len(tk.Attempts) != 2 {
		t.Fatalf("ml's job %s with attempts %+v; logs %q", done.State, tk.Attempts, logsOf(t, ml, trainer.ID))
	}
	first := tk.Attempts[0]
	if first.State != api.AttemptPreempted || !strings.Contains(first.Reason, "preempted by job "+eval.ID+" (team research)") {
		t.Fatalf("first attempt %s %q", first.State, first.Reason)
	}
	if tk.Checkpoint == nil || tk.Checkpoint.AttemptID != first.AttemptID || tk.Checkpoint.Format != api.CheckpointTar {
		t.Fatalf("checkpoint %+v, want the first attempt's archive", tk.Checkpoint)
	}
	if logs := logsOf(t, ml, trainer.ID); !strings.Contains(logs, "saved") || !strings.Contains(logs, "resumed at 41") {
		t.Fatalf("logs %q: want the checkpoint saved on SIGTERM and read back", logs)
	}
}
