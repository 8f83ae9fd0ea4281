package usage

import (
	"iter"
	"slices"
	"time"
)

// A usage query's range rarely falls on the ledger's bucket edges: a
// client asks from the moment it started, and to now. PROTOCOL.md counts
// GPU time from an attempt's start to its end, so an hour bucket the
// range cuts is not taken whole or left out: the part of it inside the
// range is computed exactly from the retained jobs' attempts, each
// attempt's overlap with that part (the state's spanRows). Buckets inside
// the range whole come from the ledger, which also holds the time of
// jobs retention has collected since; a cut hour's part counts only
// retained jobs (docs/teams.md). Day buckets, the hours folded after a
// week, count whole when they start inside the range: a day row shares
// its day with the hour rows not yet folded, so its own part of the day
// is not known, and recomputing the whole day from retained jobs would
// lose the hour rows' exact time.

// Span is a part of a query's range that an hour bucket cut.
type Span struct{ From, To time.Time }

// cutSpans are the parts of [from, to) that hour buckets of keys cut,
// merged and in order.
func cutSpans(keys iter.Seq[Key], from, to time.Time) []Span {
	var out []Span
	for k := range keys {
		if k.Day {
			continue // counted whole when it starts inside the range (above)
		}
		start := k.StartTime()
		end := start.Add(k.Span())
		if !start.Before(to) || !end.After(from) || (!start.Before(from) && !end.After(to)) {
			continue // outside the range, or inside it whole
		}
		out = append(out, Span{maxTime(start, from), minTime(end, to)})
	}
	slices.SortFunc(out, func(a, b Span) int { return a.From.Compare(b.From) })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && !sp.From.After(merged[n-1].To) {
			merged[n-1].To = maxTime(merged[n-1].To, sp.To)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// inSpans reports whether bucket k meets any of spans.
func inSpans(k Key, spans []Span) bool {
	start := k.StartTime()
	end := start.Add(k.Span())
	for _, sp := range spans {
		if start.Before(sp.To) && end.After(sp.From) {
			return true
		}
	}
	return false
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
