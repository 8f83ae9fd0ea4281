package deps

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

func TestOutcomeAndConditions(t *testing.T) {
	cases := []struct {
		states []string
		want   string
	}{
		{[]string{record.TaskSucceeded, record.TaskSucceeded}, record.TaskSucceeded},
		{[]string{record.TaskSucceeded, record.TaskCancelled}, record.TaskCancelled},
		{[]string{record.TaskCancelled, record.TaskFailed, record.TaskSucceeded}, record.TaskFailed},
	}
	for _, c := range cases {
		if got := Outcome(slices.Values(c.states)); got != c.want {
			t.Errorf("Outcome(%v) = %s, want %s", c.states, got, c.want)
		}
	}
	holds := []struct {
		cond, outcome string
		want          bool
	}{
		{command.DependFinished, record.TaskCancelled, true},
		{command.DependSucceeded, record.TaskSucceeded, true},
		{command.DependSucceeded, record.TaskFailed, false},
		{command.DependFailed, record.TaskFailed, true},
		{command.DependFailed, record.TaskCancelled, false},
		{"whenever", record.TaskSucceeded, false},
	}
	for _, c := range holds {
		if got := Holds(c.cond, c.outcome); got != c.want {
			t.Errorf("Holds(%s, %s) = %v, want %v", c.cond, c.outcome, got, c.want)
		}
	}
}

func TestCheckRefusesBadDependencies(t *testing.T) {
	exists := func(id string) bool { return id == "a" || id == "b" }
	submit := func(edit func(*command.JobSpec)) command.SubmitJob {
		c := command.SubmitJob{JobID: "j", Spec: command.JobSpec{Count: 4, DependsOn: []command.Dependency{{Job: "a", Condition: command.DependSucceeded}}}}
		edit(&c.Spec)
		return c
	}
	cases := []struct {
		name string
		edit func(*command.JobSpec)
		want error
	}{
		{"fine", func(*command.JobSpec) {}, nil},
		{"parallelism above count", func(s *command.JobSpec) { s.Parallelism = 5 }, stateerr.ErrInvalid},
		{"a gang split", func(s *command.JobSpec) { s.Gang, s.Parallelism = true, 2 }, stateerr.ErrInvalid},
		{"itself", func(s *command.JobSpec) { s.DependsOn[0].Job = "j" }, stateerr.ErrInvalid},
		{"twice", func(s *command.JobSpec) { s.DependsOn = append(s.DependsOn, s.DependsOn[0]) }, stateerr.ErrInvalid},
		{"an unknown condition", func(s *command.JobSpec) { s.DependsOn[0].Condition = "whenever" }, stateerr.ErrInvalid},
		{"a job that is not there", func(s *command.JobSpec) { s.DependsOn[0].Job = "gone" }, stateerr.ErrNotFound},
		{"too many", func(s *command.JobSpec) {
			s.DependsOn = nil
			for range command.MaxDependencies + 1 {
				s.DependsOn = append(s.DependsOn, command.Dependency{Job: "a", Condition: command.DependFinished})
			}
		}, stateerr.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(submit(c.edit), 4, exists)
			if (c.want == nil) != (err == nil) || !errors.Is(err, c.want) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
		})
	}
}

// A job waits until each dependency is met; the one it waits for lists
// it once, and forgets it when taken; the held jobs are yielded once.
func TestIndexFollowsAWait(t *testing.T) {
	x := New()
	x.Wait("c", 2, []string{"a", "b"})
	x.Bound("c")
	x.Bound("p")
	if x.Unmet("c") != 2 || !x.Tracked("c") || !x.Tracked("p") {
		t.Fatalf("after Wait: unmet %d, c tracked %v, p tracked %v", x.Unmet("c"), x.Tracked("c"), x.Tracked("p"))
	}
	held := slices.Sorted(x.Held())
	if !slices.Equal(held, []string{"c", "p"}) {
		t.Fatalf("held %v, want c and p once each", held)
	}
	if got := x.TakeDependents("a"); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("TakeDependents(a) = %v, want c", got)
	}
	if again := x.TakeDependents("a"); len(again) != 0 {
		t.Fatalf("a's dependents taken twice: %v", again)
	}
	if left := x.Met("c"); left != 1 || x.Unmet("c") != 1 {
		t.Fatalf("after one met: %d left, unmet %d", left, x.Unmet("c"))
	}
	if left := x.Met("c"); left != 0 || x.Unmet("c") != 0 {
		t.Fatalf("after both met: %d left, unmet %d", left, x.Unmet("c"))
	}
	x.Ended("p")
	if x.Tracked("p") || x.Tracked("c") != true {
		t.Fatalf("Ended(p): p tracked %v; c (bounded) tracked %v", x.Tracked("p"), x.Tracked("c"))
	}
}
