package state

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// GPU accounting. Each attempt placed by a leader that meters
// (command.AssignTask.Metered) records, when it is given, what it holds
// per GPU model in hundredths of a GPU (Attempt.Meter). When the attempt
// ends, its GPU time from its start to its end, taken from the replicated
// times, is added to the usage ledger: hundredths of a GPU times
// milliseconds, in the hour buckets the attempt ran through, by team,
// GPU model and user (the submitting token's name). Every replica adds
// the same integers, so every node answers the same figures.
//
// The ledger (package usage) is bounded: hour rows older than
// usage.HourlyFor are folded into day rows at each garbage collection,
// and day rows older than usage.Retention are dropped. Totals per team
// and model, for the Prometheus counter, are kept apart and never
// dropped.

// meter adds an ended attempt's GPU time to the usage ledger. An attempt
// that never started, or holds no GPU, adds nothing.
func (s *Store) meter(j *Job, a *Attempt) {
	if len(a.Meter) == 0 || a.StartedAt.IsZero() || !a.EndedAt.After(a.StartedAt) {
		return
	}
	team, user := command.TeamOf(j.Team), j.CreatedBy
	for _, m := range a.Meter {
		s.usage.Add(team, user, m.Model, m.Centi, a.StartedAt, a.EndedAt, a.State == attemptPreempted)
	}
}

// UsageRows lists the GPU time used in [from, to), in order: the rows of
// the buckets inside the range whole, and for the parts of the buckets
// the range cuts, rows computed from the retained jobs' attempts
// (usage_range.go), keyed by each part's start.
func (s *Store) UsageRows(from, to time.Time) []usage.Row {
	s.mu.RLock()
	out, spans := s.usage.Within(from, to)
	var t jobTables
	if len(spans) > 0 {
		t = s.jobTablesLocked()
	}
	s.mu.RUnlock()
	if len(spans) > 0 {
		out = append(out, t.spanRows(spans)...)
	}
	slices.SortFunc(out, func(a, b usage.Row) int { return usage.CompareKeys(a.Key, b.Key) })
	return out
}

// UsageTotals lists the GPU time of each team and model since metering
// began, by team then model.
func (s *Store) UsageTotals() []usage.Total {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.usage.Totals()
}

// JobUsage is one retained job's GPU time in a range: hundredths of a
// GPU times milliseconds, and its tasks that used GPUs in it.
type JobUsage struct {
	JobID, Team, User             string
	CentiGPUMillis, PreemptMillis int64
	Tasks                         int
}

// JobsUsage lists, newest job first, the GPU time the retained jobs of a
// team ("": of every team) used in [from, to): each ended, metered
// attempt's part of the range. Jobs collected by retention are gone from
// it; the usage table keeps their time by team, model and user.
//
// It walks every retained job, which at a million jobs takes seconds, so
// it walks a detached view (jobsAt) and holds the store's read lock only
// to take it: commands go on applying meanwhile.
func (s *Store) JobsUsage(team string, from, to time.Time) []JobUsage {
	return s.jobsAt().usage(team, from, to)
}

// jobTables is the jobs, their order and their tasks as they stood at
// one point of the log, detached from the store as a capture's are
// (capture.go): later commands do not change it.
type jobTables struct {
	jobs  cow.Frozen[*Job]
	order []string
	tasks cow.Frozen[*Task]
}

// jobsAt takes a jobTables under the read lock, in O(shards).
func (s *Store) jobsAt() jobTables {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.jobTablesLocked()
}

// jobTablesLocked is jobsAt for a caller holding the read lock.
func (s *Store) jobTablesLocked() jobTables {
	t := jobTables{jobs: s.jobs.Freeze(), order: s.jobOrder[:len(s.jobOrder):len(s.jobOrder)], tasks: s.tasks.Freeze()}
	s.gen.Add(1) // the tasks are shared from here on: ownTask copies one before it changes
	return t
}

// usage is JobsUsage over t.
func (t jobTables) usage(team string, from, to time.Time) []JobUsage {
	var out []JobUsage
	for i := len(t.order) - 1; i >= 0; i-- {
		j := t.jobs.Get(t.order[i])
		if team != "" && command.TeamOf(j.Team) != team {
			continue
		}
		if !j.CreatedAt.Before(to) {
			continue // no attempt of it started before to
		}
		u := JobUsage{JobID: j.ID, Team: command.TeamOf(j.Team), User: j.CreatedBy}
		for _, id := range j.TaskIDs {
			used := false
			for _, a := range t.tasks.Get(id).Attempts {
				ms := overlapMillis(a.StartedAt, a.EndedAt, from, to)
				if len(a.Meter) == 0 || a.StartedAt.IsZero() || a.EndedAt.IsZero() || ms <= 0 {
					continue
				}
				for _, m := range a.Meter {
					u.CentiGPUMillis += m.Centi * ms
					if a.State == attemptPreempted {
						u.PreemptMillis += m.Centi * ms
					}
				}
				used = true
			}
			if used {
				u.Tasks++
			}
		}
		if u.Tasks > 0 {
			out = append(out, u)
		}
	}
	return out
}

// overlapMillis is how long [a, b) and [from, to) share, in milliseconds.
func overlapMillis(a, b, from, to time.Time) int64 {
	if a.Before(from) {
		a = from
	}
	if b.After(to) {
		b = to
	}
	return b.Sub(a).Milliseconds()
}
