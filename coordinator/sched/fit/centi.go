package fit

import "github.com/gpulayer/gpulayer/coordinator/command"

// MostCenti is the most one task of spec can hold, in hundredths of a
// GPU: a whole GPU for each device it asks for (a gang's for its every
// member).
func MostCenti(spec command.JobSpec) int64 {
	r := spec.Resources
	switch {
	case r == nil || r.GPUs == 0:
		return 0
	case spec.Gang:
		return int64(spec.Count*r.GPUs) * command.CentiGPUsPerGPU
	}
	return int64(r.GPUs) * command.CentiGPUsPerGPU
}

// WholeCenti is what a task of spec (a gang: the whole gang) needs in
// whole GPUs, in hundredths; a share or MIG task counts its least, 1.
func WholeCenti(spec command.JobSpec) int64 {
	if r := spec.Resources; r != nil && r.GPUs > 0 && (r.Shared() || r.MIGProfile != "") {
		return 1
	}
	return MostCenti(spec)
}
