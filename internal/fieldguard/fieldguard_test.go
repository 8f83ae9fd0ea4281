package fieldguard

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name  string
	Times []time.Time
}

type record struct {
	ID      string
	Count   int
	Ratio   float64
	On      bool
	Tags    map[string]uint32
	Raw     json.RawMessage
	Inner   *inner
	List    []inner
	Skipped string `json:"-"`
	hidden  string
}

func TestNewFillsEveryField(t *testing.T) {
	for seed := range uint64(20) {
		x := New[record](NewFiller(seed))
		if zero := ZeroFields(x); len(zero) > 0 {
			t.Fatalf("seed %d: fields left empty: %v", seed, zero)
		}
		if x.Skipped != "" || x.hidden != "" {
			t.Fatalf("seed %d: a field not part of the record was filled", seed)
		}
	}
}

func TestZeroFieldsNamesWhatIsEmpty(t *testing.T) {
	x := New[record](NewFiller(1))
	x.Inner.Name = ""
	x.List = nil
	got := strings.Join(ZeroFields(x), " ")
	if !strings.Contains(got, "Inner.Name") || !strings.Contains(got, "List") {
		t.Fatalf("zero fields %q, want Inner.Name and List", got)
	}
}

func TestDiffNamesTheFirstDifference(t *testing.T) {
	a := New[record](NewFiller(2))
	same := *a
	same.hidden, same.Inner = "other", &inner{Name: a.Inner.Name, Times: a.Inner.Times}
	if d := Diff(a, &same); d != "" {
		t.Fatalf("equal records differ: %s", d)
	}
	// The same instant in another zone is the same time.
	b := *a
	b.Inner = &inner{Name: a.Inner.Name, Times: []time.Time{a.Inner.Times[0].In(time.FixedZone("x", 3600))}}
	b.Inner.Times = append(b.Inner.Times, a.Inner.Times[1:]...)
	if d := Diff(a, &b); d != "" {
		t.Fatalf("one instant in two zones differs: %s", d)
	}
	for _, c := range []struct {
		change func(*record)
		path   string
	}{
		{func(r *record) { r.Count++ }, "Count"},
		{func(r *record) { r.Inner = &inner{Name: "x", Times: r.Inner.Times} }, "Inner.Name"},
		{func(r *record) { r.List = append(r.List, inner{}) }, "List"},
		{func(r *record) { r.Tags = nil }, "Tags"},
		{func(r *record) { r.Raw = json.RawMessage(`{}`) }, "Raw"},
	} {
		x := *a
		c.change(&x)
		if d := Diff(a, &x); !strings.HasPrefix(d, c.path) {
			t.Errorf("changed %s, diff %q", c.path, d)
		}
	}
}
