package httpapi

import "github.com/gpulayer/gpulayer/sdk/api"

// preflightPolicy gives a gang job of at least Config.PreflightGangs
// ranks whose tasks ask for GPUs preflight, as if it had asked; its
// record then shows preflight: true.
func (s *Server) preflightPolicy(spec *api.JobSpec) {
	n := s.preflightGangs
	if n > 0 && spec.Gang && spec.Count >= n && spec.Resources != nil && spec.Resources.GPUs > 0 {
		spec.Preflight = true
	}
}
