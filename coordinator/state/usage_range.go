package state

import (
	"iter"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A usage query's range rarely falls on the table's bucket edges: a
// client asks from the moment it started, and to now. PROTOCOL.md counts
// GPU time from an attempt's start to its end, so an hour bucket the
// range cuts is not taken whole or left out: the part of it inside the
// range is computed exactly from the retained jobs' attempts, each
// attempt's overlap with that part (as group_by=job always was). Buckets
// inside the range whole come from the table, which also holds the time
// of jobs retention has collected since; a cut hour's part counts only
// retained jobs (docs/teams.md). Day buckets, the hours folded after a
// week, count whole when they start inside the range, as before: a day
// row shares its day with the hour rows not yet folded, so its own part
// of the day is not known, and recomputing the whole day from retained
// jobs would lose the hour rows' exact time.

// usageSpan is a part of the range that a bucket cut.
type usageSpan struct{ from, to time.Time }

// cutSpans are the parts of [from, to) that hour buckets of the table
// cut, merged and in order.
func cutSpans(keys iter.Seq[UsageKey], from, to time.Time) []usageSpan {
	var out []usageSpan
	for k := range keys {
		if k.Day {
			continue // counted whole when it starts inside the range (above)
		}
		start := k.StartTime()
		end := start.Add(k.Span())
		if !start.Before(to) || !end.After(from) || (!start.Before(from) && !end.After(to)) {
			continue // outside the range, or inside it whole
		}
		out = append(out, usageSpan{maxTime(start, from), minTime(end, to)})
	}
	slices.SortFunc(out, func(a, b usageSpan) int { return a.from.Compare(b.from) })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && !sp.from.After(merged[n-1].to) {
			merged[n-1].to = maxTime(merged[n-1].to, sp.to)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// inSpans reports whether bucket k meets any of spans.
func inSpans(k UsageKey, spans []usageSpan) bool {
	start := k.StartTime()
	end := start.Add(k.Span())
	for _, sp := range spans {
		if start.Before(sp.to) && end.After(sp.from) {
			return true
		}
	}
	return false
}

// spanRows is the GPU time of the retained jobs' ended, metered attempts
// within spans, as rows of the table's shape, one per span, team, model
// and user (Key.Start: the span's start). An attempt counts in a span's
// Attempts when it ended inside it, its end included and its start not,
// as meter counts it in the hour bucket it ended in (an attempt ending
// on the hour counts in the hour before).
func (t jobTables) spanRows(spans []usageSpan) []UsageRow {
	rows := map[UsageKey]*UsageRow{}
	first, last := spans[0].from, spans[len(spans)-1].to
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
					ms := max(overlapMillis(a.StartedAt, a.EndedAt, sp.from, sp.to), 0)
					ended := a.EndedAt.After(sp.from) && !a.EndedAt.After(sp.to)
					if ms == 0 && !ended {
						continue // an attempt under a millisecond counts where it ended, as in the table
					}
					for _, m := range a.Meter {
						k := UsageKey{Start: sp.from.Unix(), Team: team, Model: m.Model, User: j.CreatedBy}
						r, ok := rows[k]
						if !ok {
							r = &UsageRow{Key: k}
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
	out := make([]UsageRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
