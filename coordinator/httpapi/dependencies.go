package httpapi

import (
	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// maxDependencyIDLen bounds a job id named in depends_on.
const maxDependencyIDLen = 64

// validateJobFlow checks a spec's parallelism and depends_on against
// their bounds (the jobs named are checked by checkDependenciesVisible).
func validateJobFlow(s *api.JobSpec) error {
	count := max(s.Count, 1)
	if p := s.Parallelism; p != nil {
		switch {
		case *p < 1 || *p > count:
			return invalidf("parallelism must be between 1 and count (%d)", count)
		case s.Gang && *p < count:
			return invalidf("a gang job runs whole: parallelism must not be below count (%d)", count)
		}
	}
	if len(s.DependsOn) > api.MaxDependencies {
		return invalidf("depends_on lists at most %d jobs", api.MaxDependencies)
	}
	seen := make(map[string]bool, len(s.DependsOn))
	for i, d := range s.DependsOn {
		switch {
		case d.Job == "" || len(d.Job) > maxDependencyIDLen:
			return invalidf("depends_on[%d].job must be a job id of 1 to %d bytes", i, maxDependencyIDLen)
		case d.Condition != api.DependSucceeded && d.Condition != api.DependFailed && d.Condition != api.DependFinished:
			return invalidf("depends_on[%d].condition must be %q, %q or %q", i, api.DependSucceeded, api.DependFailed, api.DependFinished)
		case seen[d.Job]:
			return invalidf("depends_on lists job %s twice", shortQuote(d.Job))
		}
		seen[d.Job] = true
	}
	return nil
}

// checkDependenciesVisible answers 404 for a job named in depends_on that
// does not exist or that the submitter may not read (another team's, to
// a non-admin): depending on a job must not reveal that it exists.
func (s *Server) checkDependenciesVisible(p auth.Principal, spec *api.JobSpec) error {
	for _, d := range spec.DependsOn {
		if _, err := s.visibleJob(p, d.Job); err != nil {
			return err
		}
	}
	return nil
}
