package usage

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func TestAddSplitsTimeOverHours(t *testing.T) {
	const min = int64(60_000)
	for _, c := range []struct {
		name       string
		start, end time.Time
		preempted  bool
		want       []Row // by key order
	}{
		{"inside one hour", t0.Add(10 * time.Minute), t0.Add(40 * time.Minute), false,
			[]Row{{Key: Key{Start: t0.Unix()}, CentiGPUMillis: 50 * 30 * min, Attempts: 1}}},
		{"across an hour", t0.Add(30 * time.Minute), t0.Add(90 * time.Minute), false, []Row{
			{Key: Key{Start: t0.Unix()}, CentiGPUMillis: 50 * 30 * min},
			{Key: Key{Start: t0.Add(time.Hour).Unix()}, CentiGPUMillis: 50 * 30 * min, Attempts: 1}}},
		{"ending on the hour counts in the hour before", t0.Add(30 * time.Minute), t0.Add(time.Hour), true,
			[]Row{{Key: Key{Start: t0.Unix()}, CentiGPUMillis: 50 * 30 * min, PreemptCentiMillis: 50 * 30 * min, Attempts: 1}}},
		{"no time", t0, t0, false, nil},
		{"ended before it started", t0, t0.Add(-time.Minute), false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := New()
			l.Add("", "", "", 50, c.start, c.end, c.preempted)
			got := sortedRows(l)
			if len(got) != len(c.want) {
				t.Fatalf("rows %+v, want %+v", got, c.want)
			}
			var total int64
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("row %d: %+v, want %+v", i, got[i], c.want[i])
				}
				total += got[i].CentiGPUMillis
			}
			if tot := l.Totals(); total > 0 && (len(tot) != 1 || tot[0].CentiGPUMillis != total) {
				t.Fatalf("totals %+v, want one of %d", tot, total)
			}
		})
	}
}

// Fold moves an old hour into its day and drops rows past retention;
// the totals keep everything.
func TestFoldKeepsTotals(t *testing.T) {
	l := New()
	l.Add("a", "u", "H100", 100, t0, t0.Add(time.Hour), false)
	l.Add("a", "u", "H100", 100, t0.Add(5*time.Hour), t0.Add(6*time.Hour), false)
	l.Fold(t0.Add(HourlyFor + 2*time.Hour)) // the first hour folds
	rows := sortedRows(l)
	if len(rows) != 2 || !rows[0].Key.Day || rows[1].Key.Day { // by start: the day's midnight first
		t.Fatalf("after the fold: %+v, want one day and the later hour", rows)
	}
	day := t0.Truncate(24 * time.Hour).Unix()
	if rows[0].Key.Start != day || rows[0].CentiGPUMillis != 100*3_600_000 || rows[0].Attempts != 1 {
		t.Fatalf("day row %+v", rows[0])
	}
	l.Fold(t0.Add(Retention + 48*time.Hour))
	if rows := sortedRows(l); len(rows) != 0 {
		t.Fatalf("past retention: %+v", rows)
	}
	if tot := l.Totals(); len(tot) != 1 || tot[0].CentiGPUMillis != 2*100*3_600_000 {
		t.Fatalf("totals %+v", tot)
	}
}

// Within answers whole buckets itself and names the parts it cuts.
func TestWithinNamesCutSpans(t *testing.T) {
	l := New()
	l.Add("a", "u", "H100", 100, t0, t0.Add(3*time.Hour), false)
	rows, spans := l.Within(t0.Add(30*time.Minute), t0.Add(150*time.Minute))
	if len(rows) != 1 || rows[0].Key.Start != t0.Add(time.Hour).Unix() {
		t.Fatalf("whole rows %+v, want the middle hour", rows)
	}
	want := []Span{{t0.Add(30 * time.Minute), t0.Add(time.Hour)}, {t0.Add(2 * time.Hour), t0.Add(150 * time.Minute)}}
	if len(spans) != 2 || !spans[0].From.Equal(want[0].From) || !spans[0].To.Equal(want[0].To) ||
		!spans[1].From.Equal(want[1].From) || !spans[1].To.Equal(want[1].To) {
		t.Fatalf("spans %+v, want %+v", spans, want)
	}
}

func TestRestoreRefusesDuplicates(t *testing.T) {
	r := &Row{Key: Key{Start: 1, Team: "a"}}
	if _, err := Restore([]*Row{r, {Key: r.Key}}, nil); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a row twice: %v", err)
	}
	if _, err := Restore([]*Row{nil}, nil); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("an empty row: %v", err)
	}
	tot := &Total{Team: "a", Model: "m", CentiGPUMillis: 5}
	if _, err := Restore(nil, []*Total{tot, tot}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a total twice: %v", err)
	}
	l, err := Restore([]*Row{r}, []*Total{tot})
	if err != nil || len(sortedRows(l)) != 1 || l.Totals()[0] != *tot {
		t.Fatalf("restore: %v %+v %+v", err, sortedRows(l), l.Totals())
	}
}

// sortedRows is every row of l, by key.
func sortedRows(l *Ledger) []Row {
	rows, _ := l.Copies()
	slices.SortFunc(rows, func(a, b Row) int { return CompareKeys(a.Key, b.Key) })
	return rows
}
