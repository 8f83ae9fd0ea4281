package backfill

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// First takes the same slots, in the same order, as sorting every
// slot would, and none when there are fewer than it is asked for.
func TestFirstIsTheSortedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for trial := range 200 {
		var lists [][]Slot
		var all []Slot
		for w := range rng.IntN(12) {
			var l []Slot
			for i := range rng.IntN(5) {
				l = append(l, Slot{Worker: fmt.Sprintf("w%02d", w), Index: i, At: base.Add(time.Duration(rng.IntN(4)) * time.Minute), Unknown: rng.IntN(5) == 0})
			}
			slices.SortStableFunc(l, Compare)
			lists = append(lists, l)
			all = append(all, l...)
		}
		slices.SortFunc(all, Compare)
		for _, n := range []int{0, 1, 3, len(all), len(all) + 2} {
			got := First(lists, n)
			var want []Slot
			if n <= len(all) {
				want = all[:n]
			}
			if !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
				t.Fatalf("trial %d, first %d: got %+v, want %+v", trial, n, got, want)
			}
		}
	}
}

// An index updated one worker at a time chooses as a merge of every
// worker's slots afresh would.
func TestIndexChoosesAsAFreshMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var x Index
	lists := map[string][]Slot{}
	for step := range 2000 {
		id := fmt.Sprintf("w%02d", rng.IntN(20))
		var l []Slot
		for i := range rng.IntN(4) {
			l = append(l, Slot{Worker: id, Index: i, At: base.Add(time.Duration(rng.IntN(6)) * time.Minute), Unknown: rng.IntN(6) == 0})
		}
		slices.SortStableFunc(l, Compare)
		x.Set(id, l)
		if len(l) > 0 {
			lists[id] = l
		} else {
			delete(lists, id)
		}
		n := 1 + rng.IntN(8)
		var all [][]Slot
		for _, l := range lists {
			all = append(all, l)
		}
		if got, want := x.First(n), First(all, n); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d, first %d: the index chose %+v, a fresh merge %+v", step, n, got, want)
		}
	}
}

func TestEndOf(t *testing.T) {
	start := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	timed := &record.Job{Spec: command.JobSpec{TimeoutSeconds: 60}}
	for _, c := range []struct {
		name string
		t    *record.Task
		j    *record.Job
		want End
	}{
		{"no attempt", &record.Task{}, timed, End{Unknown: true}},
		{"no timeout", &record.Task{Attempts: []record.Attempt{{AssignedAt: start}}}, &record.Job{}, End{Unknown: true}},
		{"assigned, not started", &record.Task{Attempts: []record.Attempt{{AssignedAt: start}}}, timed, End{At: start.Add(time.Minute)}},
		{"started", &record.Task{Attempts: []record.Attempt{{AssignedAt: start, StartedAt: start.Add(time.Hour)}}}, timed, End{At: start.Add(61 * time.Minute)}},
	} {
		if got := EndOf(c.t, c.j); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestHold(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	h := Of("head", 4, []Slot{
		{Worker: "w1", Devices: []string{"a", "b"}, At: at.Add(time.Minute)},
		{Worker: "w2", Devices: []string{"c", "d"}, At: at.Add(5 * time.Minute)},
	})
	if h.GPUs != 4 || len(h.Devices) != 4 || !h.Known || !h.Until.Equal(at.Add(5*time.Minute)) {
		t.Fatalf("hold %+v", h)
	}
	job := func(id string, timeout int) *record.Job {
		return &record.Job{ID: id, Spec: command.JobSpec{TimeoutSeconds: timeout}}
	}
	for _, c := range []struct {
		name string
		h    *Hold
		j    *record.Job
		want bool
	}{
		{"no hold", nil, job("x", 0), true},
		{"the holder", h, job("head", 0), true},
		{"ends before the GPUs are needed", h, job("x", 300), true},
		{"ends after", h, job("x", 301), false},
		{"no timeout", h, job("x", 0), false},
		{"an unknown end", Of("head", 2, []Slot{{Devices: []string{"a", "b"}, Unknown: true}}), job("x", 1), false},
	} {
		if got := c.h.Spares(c.j, at); got != c.want {
			t.Errorf("%s: spares %v, want %v", c.name, got, c.want)
		}
	}
	whole := func(gpus, count int, gang bool) command.JobSpec {
		return command.JobSpec{Count: count, Gang: gang, Resources: &command.Resources{GPUs: gpus}}
	}
	if Large(whole(1, 1, false)) || !Large(whole(2, 1, false)) || !Large(whole(1, 2, true)) || Large(whole(1, 4, false)) || Large(command.JobSpec{}) {
		t.Error("Large: a task of two GPUs or a gang of two members holds; one GPU, or none, does not")
	}
}

func TestHoldReason(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	known := Of("big", 8, []Slot{{Devices: []string{"a"}, At: at}})
	if got := known.Reason("job big"); !strings.Contains(got, "GPUs held for job big (8 GPUs") || !strings.Contains(got, "until 2026-12-07T10:00:00Z") {
		t.Errorf("known end: %q", got)
	}
	unknown := Of("big", 2, []Slot{{Devices: []string{"a"}, Unknown: true}})
	if got := unknown.Reason("job big"); !strings.Contains(got, "until a holder without timeout_seconds ends") {
		t.Errorf("unknown end: %q", got)
	}
}
