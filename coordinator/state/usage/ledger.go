// Package usage is the GPU accounting ledger: GPU time in hundredths of
// a GPU times milliseconds, in hour buckets (days once folded), by team,
// GPU model and user, and totals per team and model that are never
// dropped. The state adds each ended attempt's time as it applies the
// command that ends it, so every replica adds the same integers; the
// ledger holds no clock and reads no record of the state's. It knows no
// other room but the state's sentinel errors.
package usage

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Retention: hour rows older than HourlyFor are folded into day rows at
// each garbage collection (Fold), and day rows older than Retention are
// dropped.
const (
	HourlyFor = 7 * 24 * time.Hour
	Retention = 400 * 24 * time.Hour
)

// Key names one row: a bucket (an hour, or a day once folded) and who
// used GPUs of which model in it.
type Key struct {
	Start int64  `json:"start"` // the bucket's start, Unix seconds
	Day   bool   `json:"day,omitempty"`
	Team  string `json:"team"`
	Model string `json:"model"`
	User  string `json:"user"`
}

// StartTime is the bucket's start.
func (k Key) StartTime() time.Time { return time.Unix(k.Start, 0).UTC() }

// Span is the bucket's length: an hour, or a day once folded.
func (k Key) Span() time.Duration {
	if k.Day {
		return 24 * time.Hour
	}
	return time.Hour
}

// Row is one row: GPU time in hundredths of a GPU times milliseconds
// (preempted attempts' part of it apart too), and the attempts that
// ended in the bucket.
type Row struct {
	Key                Key   `json:"key"`
	CentiGPUMillis     int64 `json:"centi_gpu_ms"`
	PreemptCentiMillis int64 `json:"preempted_centi_gpu_ms,omitempty"`
	Attempts           int   `json:"attempts,omitempty"`
}

// Total is the GPU time a team used of one model since metering began.
type Total struct {
	Team           string `json:"team"`
	Model          string `json:"model"`
	CentiGPUMillis int64  `json:"centi_gpu_ms"`
}

type totalKey struct{ team, model string }

// Ledger is the table and its totals. It follows its owner's locking:
// reads under the read lock, Add, Fold and Restore under the write lock.
type Ledger struct {
	rows   map[Key]*Row
	totals map[totalKey]int64
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{rows: map[Key]*Row{}, totals: map[totalKey]int64{}} }

// Add counts centi hundredths of a GPU of model, held from start to end
// by an attempt of team's user: in the totals, and in each hour bucket
// the attempt ran through, its part of the time there; the attempt
// counts in the bucket it ended in (an end on the hour: the hour
// before). An empty or negative span adds nothing.
func (l *Ledger) Add(team, user, model string, centi int64, start, end time.Time, preempted bool) {
	if !end.After(start) {
		return
	}
	l.totals[totalKey{team, model}] += centi * end.Sub(start).Milliseconds()
	for from := start; from.Before(end); {
		hour := from.UTC().Truncate(time.Hour)
		to := hour.Add(time.Hour)
		if end.Before(to) {
			to = end
		}
		row := l.row(Key{Start: hour.Unix(), Team: team, Model: model, User: user})
		ms := centi * to.Sub(from).Milliseconds()
		row.CentiGPUMillis += ms
		if preempted {
			row.PreemptCentiMillis += ms
		}
		if !to.Before(end) {
			row.Attempts++
		}
		from = to
	}
}

func (l *Ledger) row(k Key) *Row {
	r, ok := l.rows[k]
	if !ok {
		r = &Row{Key: k}
		l.rows[k] = r
	}
	return r
}

// Fold folds hour rows older than HourlyFor into day rows and drops rows
// older than Retention, as of now.
func (l *Ledger) Fold(now time.Time) {
	hourly, keep := now.Add(-HourlyFor).Unix(), now.Add(-Retention).Unix()
	const day = 24 * 60 * 60
	for _, k := range slices.SortedFunc(maps.Keys(l.rows), CompareKeys) {
		r := l.rows[k]
		switch {
		case k.Start < keep:
			delete(l.rows, k)
		case !k.Day && k.Start < hourly:
			delete(l.rows, k)
			dk := k
			dk.Start, dk.Day = k.Start-k.Start%day, true
			d := l.row(dk)
			d.CentiGPUMillis += r.CentiGPUMillis
			d.PreemptCentiMillis += r.PreemptCentiMillis
			d.Attempts += r.Attempts
		}
	}
}

// Within lists the rows the ledger answers for [from, to) by itself, in
// no set order: hour buckets inside the range whole and day buckets that
// start inside it. The parts of hour buckets the range cuts are spans,
// merged and in order, for the caller to compute from the attempts it
// keeps (span.go).
func (l *Ledger) Within(from, to time.Time) (rows []Row, spans []Span) {
	spans = cutSpans(maps.Keys(l.rows), from, to)
	for k, r := range l.rows {
		start := k.StartTime()
		switch {
		case k.Day: // whole, when it starts inside the range (span.go)
			if !start.Before(from) && start.Before(to) {
				rows = append(rows, *r)
			}
		case !start.Before(from) && !start.Add(k.Span()).After(to) && !inSpans(k, spans):
			rows = append(rows, *r)
		}
	}
	return rows, spans
}

// Copies lists every row and every total, in no set order (a snapshot's
// capture, under the state's locks: its encoding sorts them).
func (l *Ledger) Copies() (rows []Row, totals []Total) {
	rows = make([]Row, 0, len(l.rows))
	for _, r := range l.rows {
		rows = append(rows, *r)
	}
	return rows, l.totalsUnsorted()
}

func (l *Ledger) totalsUnsorted() []Total {
	out := make([]Total, 0, len(l.totals))
	for k, v := range l.totals {
		out = append(out, Total{Team: k.team, Model: k.model, CentiGPUMillis: v})
	}
	return out
}

// Totals lists the GPU time of each team and model since metering began,
// by team then model.
func (l *Ledger) Totals() []Total {
	out := l.totalsUnsorted()
	slices.SortFunc(out, func(a, b Total) int { return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model)) })
	return out
}

// Restore returns a ledger holding rows and totals, as a snapshot lists
// them, refusing (ErrInvalid) a row or total named twice or empty.
func Restore(rows []*Row, totals []*Total) (*Ledger, error) {
	l := New()
	for _, r := range rows {
		if r == nil || l.rows[r.Key] != nil {
			return nil, fmt.Errorf("usage row listed twice or empty: %w", stateerr.ErrInvalid)
		}
		l.rows[r.Key] = r
	}
	for _, u := range totals {
		if u == nil {
			return nil, fmt.Errorf("empty usage total: %w", stateerr.ErrInvalid)
		}
		k := totalKey{u.Team, u.Model}
		if _, dup := l.totals[k]; dup {
			return nil, fmt.Errorf("usage total %s/%s listed twice: %w", u.Team, u.Model, stateerr.ErrInvalid)
		}
		l.totals[k] = u.CentiGPUMillis
	}
	return l, nil
}

// CompareKeys orders keys by bucket start, hours before days, then team,
// model and user.
func CompareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(boolInt(a.Day), boolInt(b.Day)),
		cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model), cmp.Compare(a.User, b.User))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
