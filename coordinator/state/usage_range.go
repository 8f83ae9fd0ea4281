package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// A usage query's range rarely falls on the ledger's bucket edges: the
// parts of hour buckets it cuts (usage.Span) are computed here, exactly,
// from the retained jobs' attempts (package usage says why).

// spanRows is the GPU time of the retained jobs' ended, metered attempts
// within spans, as rows of the table's shape, one per span, team, model
// and user (Key.Start: the span's start). An attempt counts in a span's
// Attempts when it ended inside it, its end included and its start not,
// as meter counts it in the hour bucket it ended in (an attempt ending
// on the hour counts in the hour before).
func (t jobTables) spanRows(spans []usage.Span) []usage.Row {
	rows := map[usage.Key]*usage.Row{}
	first, last := spans[0].From, spans[len(spans)-1].To
	for _, id := range t.order {
		j := t.jobs.Get(id)
		if !j.CreatedAt.Before(last) {
			continue // no attempt of it started before the last span ends
		}
		team := command.TeamOf(j.Team)
		for _, tid := range j.TaskIDs {
			for _, a := range t.tasks.Get(tid).Attempts {
				if len(a.Meter) == 0 || a.StartedAt.IsZero() || !a.EndedAt.After(a.StartedAt) || !a.EndedAt.After(first) {
					continue // as meter: never started, never ended, or ended before the spans
				}
				for _, sp := range spans {
					ms := max(overlapMillis(a.StartedAt, a.EndedAt, sp.From, sp.To), 0)
					ended := a.EndedAt.After(sp.From) && !a.EndedAt.After(sp.To)
					if ms == 0 && !ended {
						continue // an attempt under a millisecond counts where it ended, as in the table
					}
					for _, m := range a.Meter {
						k := usage.Key{Start: sp.From.Unix(), Team: team, Model: m.Model, User: j.CreatedBy}
						r, ok := rows[k]
						if !ok {
							r = &usage.Row{Key: k}
							rows[k] = r
						}
						r.CentiGPUMillis += m.Centi * ms
						if a.State == attemptPreempted {
							r.PreemptCentiMillis += m.Centi * ms
						}
						if ended {
							r.Attempts++
						}
					}
				}
			}
		}
	}
	out := make([]usage.Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	return out
}
