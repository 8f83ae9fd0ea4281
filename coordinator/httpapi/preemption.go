package httpapi

import (
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// validatePreemption checks a spec's preemption grace and checkpoint.
// The checkpoint path is a task-directory path as an input's is, and not
// one the agent makes (tmp) or one the job's inputs are staged at: the
// next attempt's checkpoint is staged there.
func validatePreemption(s *api.JobSpec) error {
	if g := s.PreemptionGraceSeconds; g != nil && (*g < 0 || *g > api.MaxPreemptionGraceSeconds) {
		return invalidf("preemption_grace_seconds must be between 0 and %d", api.MaxPreemptionGraceSeconds)
	}
	c := s.Checkpoint
	if c == nil {
		return nil
	}
	if err := api.CheckArtifactPath(c.Path); err != nil {
		return invalidf("checkpoint.path %s: %v", shortQuote(c.Path), err)
	}
	if c.Path == "tmp" || strings.HasPrefix(c.Path, "tmp/") {
		return invalidf("checkpoint.path: tmp is the task's TMPDIR, made by the agent")
	}
	for i, in := range s.Inputs {
		p := in.StagePath()
		if p == c.Path || strings.HasPrefix(p, c.Path+"/") || strings.HasPrefix(c.Path, p+"/") {
			return invalidf("checkpoint.path %s meets inputs[%d]'s path %s", shortQuote(c.Path), i, shortQuote(p))
		}
	}
	return nil
}

// validateCheckpointRef checks the checkpoint an attempt's end reports:
// a digest, a size an artifact may have, and a known format. That it
// was uploaded, and that the job has a checkpoint, the state checks.
func validateCheckpointRef(c *api.CheckpointRef) error {
	switch {
	case c == nil:
		return nil
	case !api.ValidDigest(c.SHA256):
		return invalidf("checkpoint.sha256: %s is not a sha256 digest", shortQuote(c.SHA256))
	case c.Size < 0 || c.Size > api.MaxArtifactBody:
		return invalidf("checkpoint.size: %d is not 0 … %d", c.Size, int64(api.MaxArtifactBody))
	case c.Format != api.CheckpointFile && c.Format != api.CheckpointTar:
		return invalidf("checkpoint.format: %s is neither %s nor %s", shortQuote(c.Format), api.CheckpointFile, api.CheckpointTar)
	}
	return nil
}
