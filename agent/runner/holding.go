package runner

import "slices"

// TasksOn lists, sorted, the tasks of the attempts being run that hold
// any of uuids, whole or shared.
func (r *Runner) TasksOn(uuids ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rn := range r.running {
		if slices.ContainsFunc(rn.a.Devices, func(d string) bool { return slices.Contains(uuids, d) }) && !slices.Contains(out, rn.a.ID) {
			out = append(out, rn.a.ID)
		}
	}
	slices.Sort(out)
	return out
}
