package nvml

import "context"

// Repartition sets the MIG layout of GPU uuid: layout lists the profiles
// of the MIG devices it is to have ("3g.40gb"), none the GPU whole with
// MIG mode off. The caller has drained the GPU. It returns
// ErrNoRepartition when the source cannot, ErrMIGLayout when the GPU
// cannot take the layout (the GPU is left as it was), and ErrRepartition
// when NVML refused a step once it had begun. Reads wait for it.
func (s *Source) Repartition(ctx context.Context, uuid string, layout []string) error {
	if s.repartition == nil {
		return ErrNoRepartition
	}
	if err := s.lockOpen(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	return s.repartition(ctx, uuid, layout)
}
