package state

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
)

// GPU accounting. Each attempt placed by a leader that meters
// (command.AssignTask.Metered) records, when it is given, what it holds
// per GPU model in hundredths of a GPU (Attempt.Meter). When the attempt
// ends, its GPU time from its start to its end, taken from the replicated
// times, is added to the usage table: hundredths of a GPU times
// milliseconds, in the hour buckets the attempt ran through, by team,
// GPU model and user (the submitting token's name). Every replica adds
// the same integers, so every node answers the same figures.
//
// The table is bounded: hour rows older than UsageHourlyFor are folded
// into day rows at each garbage collection, and day rows older than
// UsageRetention are dropped. Totals per team and model, for the
// Prometheus counter, are kept apart and never dropped.

// Usage retention.
const (
	UsageHourlyFor = 7 * 24 * time.Hour
	UsageRetention = 400 * 24 * time.Hour
)

// MeterShare is what one attempt holds of GPUs of one model, in
// hundredths of a GPU.
type MeterShare struct {
	Model string `json:"model"`
	Centi int64  `json:"centi"`
}

// UsageKey names one row of the usage table: a bucket (an hour, or a day
// once folded) and who used GPUs of which model in it.
type UsageKey struct {
	Start int64  `json:"start"` // the bucket's start, Unix seconds
	Day   bool   `json:"day,omitempty"`
	Team  string `json:"team"`
	Model string `json:"model"`
	User  string `json:"user"`
}

// StartTime is the bucket's start.
func (k UsageKey) StartTime() time.Time { return time.Unix(k.Start, 0).UTC() }

// Span is the bucket's length: an hour, or a day once folded.
func (k UsageKey) Span() time.Duration {
	if k.Day {
		return 24 * time.Hour
	}
	return time.Hour
}

// UsageRow is one row: GPU time in hundredths of a GPU times
// milliseconds (preempted attempts' part of it apart too), and the
// attempts that ended in the bucket.
type UsageRow struct {
	Key                UsageKey `json:"key"`
	CentiGPUMillis     int64    `json:"centi_gpu_ms"`
	PreemptCentiMillis int64    `json:"preempted_centi_gpu_ms,omitempty"`
	Attempts           int      `json:"attempts,omitempty"`
}

// UsageTotal is the GPU time a team used of one model since metering
// began.
type UsageTotal struct {
	Team           string `json:"team"`
	Model          string `json:"model"`
	CentiGPUMillis int64  `json:"centi_gpu_ms"`
}

type totalKey struct{ team, model string }

// meterShares is what devs of worker w hold, per model, for a task with
// resources r: a whole GPU 100, a MIG device or share its memory's
// fraction of its GPU, rounded up.
func meterShares(w *Worker, devs []string, r *command.Resources) []MeterShare {
	var out []MeterShare
	for _, uuid := range devs {
		model, centi := deviceCenti(w, uuid, r)
		if i := slices.IndexFunc(out, func(m MeterShare) bool { return m.Model == model }); i >= 0 {
			out[i].Centi += centi
			continue
		}
		out = append(out, MeterShare{Model: model, Centi: centi})
	}
	return out
}

// meter adds an ended attempt's GPU time to the usage table. An attempt
// that never started, or holds no GPU, adds nothing.
func (s *Store) meter(j *Job, a *Attempt) {
	if len(a.Meter) == 0 || a.StartedAt.IsZero() || !a.EndedAt.After(a.StartedAt) {
		return
	}
	team, user := command.TeamOf(j.Team), j.CreatedBy
	preempted := a.State == attemptPreempted
	for _, m := range a.Meter {
		tk := totalKey{team, m.Model}
		s.usageTotals[tk] += m.Centi * a.EndedAt.Sub(a.StartedAt).Milliseconds()
		for from := a.StartedAt; from.Before(a.EndedAt); {
			hour := from.UTC().Truncate(time.Hour)
			to := hour.Add(time.Hour)
			if a.EndedAt.Before(to) {
				to = a.EndedAt
			}
			row := s.usageRow(UsageKey{Start: hour.Unix(), Team: team, Model: m.Model, User: user})
			ms := m.Centi * to.Sub(from).Milliseconds()
			row.CentiGPUMillis += ms
			if preempted {
				row.PreemptCentiMillis += ms
			}
			if !to.Before(a.EndedAt) {
				row.Attempts++
			}
			from = to
		}
	}
}

func (s *Store) usageRow(k UsageKey) *UsageRow {
	r, ok := s.usage[k]
	if !ok {
		r = &UsageRow{Key: k}
		s.usage[k] = r
	}
	return r
}

// foldUsage folds hour rows older than UsageHourlyFor into day rows and
// drops rows older than UsageRetention, as of now.
func (s *Store) foldUsage(now time.Time) {
	hourly, keep := now.Add(-UsageHourlyFor).Unix(), now.Add(-UsageRetention).Unix()
	const day = 24 * 60 * 60
	for _, k := range slices.SortedFunc(maps.Keys(s.usage), compareUsageKeys) {
		r := s.usage[k]
		switch {
		case k.Start < keep:
			delete(s.usage, k)
		case !k.Day && k.Start < hourly:
			delete(s.usage, k)
			dk := k
			dk.Start, dk.Day = k.Start-k.Start%day, true
			d := s.usageRow(dk)
			d.CentiGPUMillis += r.CentiGPUMillis
			d.PreemptCentiMillis += r.PreemptCentiMillis
			d.Attempts += r.Attempts
		}
	}
}

func compareUsageKeys(a, b UsageKey) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(boolInt(a.Day), boolInt(b.Day)),
		cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model), cmp.Compare(a.User, b.User))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// UsageRows lists the GPU time used in [from, to), in order: the rows of
// the buckets inside the range whole, and for the parts of the buckets
// the range cuts, rows computed from the retained jobs' attempts
// (usage_range.go), keyed by each part's start.
func (s *Store) UsageRows(from, to time.Time) []UsageRow {
	s.mu.RLock()
	spans := cutSpans(maps.Keys(s.usage), from, to)
	var out []UsageRow
	for k, r := range s.usage {
		start := k.StartTime()
		switch {
		case k.Day: // whole, when it starts inside the range (usage_range.go)
			if !start.Before(from) && start.Before(to) {
				out = append(out, *r)
			}
		case !start.Before(from) && !start.Add(k.Span()).After(to) && !inSpans(k, spans):
			out = append(out, *r)
		}
	}
	var t jobTables
	if len(spans) > 0 {
		t = s.jobTablesLocked()
	}
	s.mu.RUnlock()
	if len(spans) > 0 {
		out = append(out, t.spanRows(spans)...)
	}
	slices.SortFunc(out, func(a, b UsageRow) int { return compareUsageKeys(a.Key, b.Key) })
	return out
}

// UsageTotals lists the GPU time of each team and model since metering
// began, by team then model.
func (s *Store) UsageTotals() []UsageTotal {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]UsageTotal, 0, len(s.usageTotals))
	for k, v := range s.usageTotals {
		out = append(out, UsageTotal{Team: k.team, Model: k.model, CentiGPUMillis: v})
	}
	slices.SortFunc(out, func(a, b UsageTotal) int { return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model)) })
	return out
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
