package runner

// ExecTarget names the running attempt of a task, for an exec into it:
// its executor and attempt id. ok is false when this runner runs no
// attempt of the task, or one superseded or not yet given a user.
func (r *Runner) ExecTarget(taskID string) (executorName, attemptID string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rn := range r.running {
		if rn.a.ID == taskID && !rn.superseded.Load() && rn.user.Load() != nil {
			return rn.a.Executor, rn.a.AttemptID, true
		}
	}
	return "", "", false
}
