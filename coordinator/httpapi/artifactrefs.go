package httpapi

import (
	"fmt"
	"path"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// validateArtifactRefs checks a job's inputs and outputs: each input a
// digest staged at a path inside the task's directory, no two at one
// path; each output a glob inside it, listed once.
func validateArtifactRefs(s *api.JobSpec) error {
	staged := make(map[string]int, len(s.Inputs))
	for i, in := range s.Inputs {
		field := fmt.Sprintf("inputs[%d]", i)
		if !api.ValidDigest(in.SHA256) {
			return invalidf("%s.sha256: %s is not a sha256 digest (64 lowercase hex)", field, shortQuote(in.SHA256))
		}
		if in.Path != "" {
			if err := api.CheckArtifactPath(in.Path); err != nil {
				return invalidf("%s.path %s: %v", field, shortQuote(in.Path), err)
			}
		}
		p := in.StagePath()
		if j, dup := staged[p]; dup {
			return invalidf("%s.path: inputs[%d] is staged at %s already", field, j, shortQuote(p))
		}
		staged[p] = i
	}
	for p, i := range staged {
		if p == "tmp" {
			return invalidf("inputs[%d].path: tmp is the task's TMPDIR, made by the agent", i)
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if j, clash := staged[dir]; clash {
				return invalidf("inputs[%d].path: %s lies under inputs[%d]'s file %s", i, shortQuote(p), j, shortQuote(dir))
			}
		}
	}
	seen := make(map[string]bool, len(s.Outputs))
	for i, g := range s.Outputs {
		if err := api.CheckOutputGlob(g); err != nil {
			return invalidf("outputs[%d] %s: %v", i, shortQuote(g), err)
		}
		if seen[g] {
			return invalidf("outputs[%d]: %s is listed twice", i, shortQuote(g))
		}
		seen[g] = true
	}
	return nil
}

// validateTaskArtifacts checks the artifacts of a finish: digests, paths
// inside the task's directory listed once, sizes adding up to at most
// MaxTaskOutputBytes. A bare digest (an older agent's form) has neither
// path nor size.
func validateTaskArtifacts(arts []api.TaskArtifact) error {
	if err := checkCount("artifacts", len(arts), api.MaxDigests); err != nil {
		return err
	}
	var total int64
	paths := make(map[string]bool, len(arts))
	for i, a := range arts {
		field := fmt.Sprintf("artifacts[%d]", i)
		if !api.ValidDigest(a.SHA256) {
			return invalidf("%s.sha256: %s is not a sha256 digest", field, shortQuote(a.SHA256))
		}
		if a.Size < 0 || a.Size > api.MaxArtifactBody {
			return invalidf("%s.size: %d is not 0 … %d", field, a.Size, int64(api.MaxArtifactBody))
		}
		total += a.Size
		if a.Path == "" {
			continue
		}
		if err := api.CheckArtifactPath(a.Path); err != nil {
			return invalidf("%s.path %s: %v", field, shortQuote(a.Path), err)
		}
		if paths[a.Path] {
			return invalidf("%s.path: %s is listed twice", field, shortQuote(a.Path))
		}
		paths[a.Path] = true
	}
	if total > api.MaxTaskOutputBytes {
		return invalidf("artifacts: %d bytes in all, at most %d per task", total, int64(api.MaxTaskOutputBytes))
	}
	return nil
}
