package coordinator_test

import (
	"fmt"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// TestAWriteMakesAtMostTwoCodecPasses counts, on a real single-node
// coordinator (Raft, HTTP), the passes the command codec makes over a
// submit and a finish: the leader encodes the entry once (a submit's spec
// digest and size come from that same pass) and the one replica decodes
// it once. The request's decode and the answer's encode are the wire's,
// not the write's, and are not counted.
func TestAWriteMakesAtMostTwoCodecPasses(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker := h.Worker(t, "w1")

	passes := func(typ command.Type) int64 {
		enc, dec := command.Passes(typ)
		return enc + dec
	}
	check := func(what string, typ command.Type, write func() error) {
		t.Helper()
		before := passes(typ)
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := passes(typ) - before; got < 1 || got > 2 {
			t.Errorf("%s: %d codec passes over its command, want at most 2 (and at least the decode)", what, got)
		}
	}

	outputs := make([]string, 32)
	for i := range outputs {
		outputs[i] = fmt.Sprintf("out/%02d/*.bin", i)
	}
	spec := api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true","args":["a","b"]}`), Outputs: outputs, IdempotencyKey: "k1"}
	check("submit", command.TypeSubmitJob, func() error { _, err := admin.SubmitJob(ctx, spec); return err })
	check("idempotent resubmit", command.TypeSubmitJob, func() error { _, err := admin.SubmitJob(ctx, spec); return err })

	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	check("start", command.TypeStartTask, func() error { return worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID) })
	check("finish", command.TypeFinishTask, func() error {
		_, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID, SubmissionID: "s1"})
		return err
	})
}
