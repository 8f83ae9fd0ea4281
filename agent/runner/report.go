package runner

import (
	"context"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Report is what an attempt has to tell the coordinator when it ends:
// a finish (it ran to an exit code) or a failure (it could not run, or
// was stopped for a cause of the agent's). Exactly one is set.
type Report struct {
	TaskID string
	Finish *api.FinishRequest
	Fail   *api.FailRequest
	// LastLogSeq is the sequence number of the attempt's last log chunk.
	LastLogSeq int64
}

// Reports takes an attempt's report for delivery: the agent's spool,
// which writes it to disk and keeps it until a coordinator acknowledges
// it (agent/spool). Report returns once the report is safe, not once it
// is delivered; an error means it could not be kept.
type Reports interface {
	Report(ctx context.Context, rep Report) error
}

// direct sends reports to the coordinator at once, keeping nothing: the
// runner's way when Config.Reports is nil.
type direct struct{ c Coordinator }

func (d direct) Report(ctx context.Context, rep Report) error {
	var err error
	if rep.Finish != nil {
		_, err = d.c.Finish(ctx, rep.TaskID, *rep.Finish)
	} else {
		_, err = d.c.Fail(ctx, rep.TaskID, *rep.Fail)
	}
	return err
}
