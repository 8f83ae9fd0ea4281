package state

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Teams take GPUs in order of in use / weight, lowest first (ties by
// name): over a fleet they fill, each team's GPUs follow its weight.
func TestFairShareOrder(t *testing.T) {
	cases := []struct {
		name    string
		weights map[string]int64
		gpus    int
		order   []string // the first placements, by team
		want    map[string]int
	}{
		{"two teams, equal weights", map[string]int64{"a": 100, "b": 100}, 4, []string{"a", "b", "a", "b"}, map[string]int{"a": 2, "b": 2}},
		{"two teams, weights 1 and 2", map[string]int64{"a": 100, "b": 200}, 6, []string{"a", "b", "b", "a", "b", "b"}, map[string]int{"a": 2, "b": 4}},
		{"three teams, weights 1, 1, 2", map[string]int64{"a": 100, "b": 100, "c": 200}, 8, nil, map[string]int{"a": 2, "b": 2, "c": 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			addWorkers(t, s, tc.gpus, "w1")
			teams := slices.Sorted(func(yield func(string) bool) {
				for k := range tc.weights {
					if !yield(k) {
						return
					}
				}
			})
			for _, team := range slices.Backward(teams) { // submitted in reverse: age does not decide between teams
				mustApply(t, s, command.CreateTeam{Name: team, Settings: borrowing(tc.weights[team], 0, nil), Now: at(0)},
					teamJob("job-"+team, team, tc.gpus, 1, 0))
			}
			p := &placer{t: t, s: s, now: at(2)}
			byTeam := jobsOf(s, p.fill("w1"))
			for i, want := range tc.order {
				if byTeam[i] != "job-"+want {
					t.Fatalf("placements %v, want teams in order %v", byTeam, tc.order)
				}
			}
			for team, want := range tc.want {
				if got := count(byTeam, "job-"+team); got != want {
					t.Fatalf("team %s got %d GPUs, want %d (placements %v)", team, got, want, byTeam)
				}
			}
		})
	}
}

// Within a team, higher priority goes first, then older; across teams,
// priority does not jump fair share: a team's high-priority job waits
// while another team is further below its share.
func TestPriorityWithinTeam(t *testing.T) {
	s := twoTeams(t, 4)
	mustApply(t, s, teamJob("a-low", "a", 2, 1, 0), teamJob("a-high", "a", 2, 1, 5), teamJob("b-top", "b", 2, 1, 1000))
	p := &placer{t: t, s: s, now: at(2)}
	got := jobsOf(s, p.fill("w1"))
	want := []string{"a-high", "b-top", "a-high", "b-top"}
	if !slices.Equal(got, want) {
		t.Fatalf("placements %v, want %v", got, want)
	}
	if got := states(s, "a-low-a", "a-low-b"); !slices.Equal(got, []string{taskPending, taskPending}) {
		t.Fatalf("a-low's tasks are %v, want both pending behind a-high", got)
	}
}

// A team's pending work says it waits behind a team further below its
// fair share.
func TestFairShareReason(t *testing.T) {
	s := twoTeams(t, 2)
	mustApply(t, s, teamJob("ja", "a", 3, 1, 0))
	p := &placer{t: t, s: s, now: at(2)}
	p.fill("w1")
	mustApply(t, s, teamJob("jb", "b", 1, 1, 0))
	rec, _ := s.Job("ja")
	if want := "fair share: behind team b (0 GPUs in use at weight 1; team a 2 at weight 1)"; rec.PendingReason != want {
		t.Fatalf("pending reason %q, want %q", rec.PendingReason, want)
	}
}

// A gang at the head of the order is not starved by a stream of small
// tasks: it holds the GPUs it needs as they free up, small tasks may not
// take them (their timeouts end after the GPUs are needed), and once
// they are all free the gang is placed. While it waits, the small tasks
// say what they wait behind. Without timeouts the hold is kept as well.
func TestGangBehindStreamOfSmallTasks(t *testing.T) {
	for _, timeout := range []int{600, 0} {
		t.Run(fmt.Sprintf("timeout %d", timeout), func(t *testing.T) {
			s := New()
			addWorkers(t, s, 2, "w1", "w2")
			small := func(i int) command.SubmitJob {
				c := submit(fmt.Sprintf("s%03d", i), 1, 1)
				c.Spec.TimeoutSeconds = timeout
				return c
			}
			mustApply(t, s, small(0), small(1), small(2), small(3))
			p := &placer{t: t, s: s, now: at(2)}
			p.fill("w1", "w2")
			gang := gangJob("g", 2)
			gang.Spec.Resources.GPUs = 2
			mustApply(t, s, gang)
			running := []string{"s000-a", "s001-a", "s002-a", "s003-a"}
			for step := range 20 {
				p.now = at(10 + 10*step)
				p.finish(running[0])
				running = running[1:]
				mustApply(t, s, small(4+step))
				if step == 0 {
					rec, _ := s.Job("s004")
					if !strings.Contains(rec.PendingReason, "GPUs held for job g (4 GPUs") {
						t.Fatalf("a small task's pending reason %q does not name the hold", rec.PendingReason)
					}
				}
				running = append(running, p.fill("w1", "w2")...)
				if tk, _ := s.Task("g-a"); tk.Active() {
					if step != 3 {
						t.Fatalf("the gang was placed at step %d, want 3 (when the last small task ended)", step)
					}
					return
				}
			}
			t.Fatal("the gang was never placed behind a stream of small tasks")
		})
	}
}

// A small task whose timeout ends before the held GPUs are needed
// backfills them.
func TestBackfillShortTask(t *testing.T) {
	s := New()
	addWorkers(t, s, 2, "w1")
	long := submit("long", 1, 1)
	long.Spec.TimeoutSeconds = 1000
	mustApply(t, s, long)
	p := &placer{t: t, s: s, now: at(2)}
	p.fill("w1")
	gang := gangJob("g", 1)
	gang.Spec.Resources.GPUs = 2
	short := submit("short", 1, 1)
	short.Spec.TimeoutSeconds = 100
	slow := submit("slow", 1, 1)
	slow.Spec.TimeoutSeconds = 5000
	mustApply(t, s, gang, slow, short)
	got := jobsOf(s, p.fill("w1"))
	if !slices.Equal(got, []string{"short"}) {
		t.Fatalf("placed %v, want only the short task backfilled", got)
	}
}

// twoTeams is a store with teams a and b of weight 1 and one worker w1
// of n GPUs.
func twoTeams(t *testing.T, n int) *Store {
	s := New()
	addWorkers(t, s, n, "w1")
	mustApply(t, s,
		command.CreateTeam{Name: "a", Settings: borrowing(100, 0, nil), Now: at(0)},
		command.CreateTeam{Name: "b", Settings: borrowing(100, 0, nil), Now: at(0)})
	return s
}

// Priority inversion is avoided: a high-priority two-GPU task is not
// kept waiting by the lower-priority one-GPU tasks of its own team that
// would take each GPU as it frees; the freed GPU is held for it, and it
// runs once the second frees.
func TestPriorityInversionAvoided(t *testing.T) {
	s := twoTeams(t, 2)
	mustApply(t, s, teamJob("low", "a", 6, 1, 0))
	p := &placer{t: t, s: s, now: at(2)}
	running := p.fill("w1")
	mustApply(t, s, teamJob("high", "a", 1, 2, 50))
	p.now = at(10)
	p.finish(running[0])
	if got := p.fill("w1"); len(got) != 0 {
		t.Fatalf("placed %v on the freed GPU, want it held for the high-priority task", jobsOf(s, got))
	}
	if rec, _ := s.Job("low"); !strings.Contains(rec.PendingReason, "GPUs held for job high (2 GPUs") {
		t.Fatalf("low's reason %q", rec.PendingReason)
	}
	p.finish(running[1])
	if got := jobsOf(s, p.fill("w1")); !slices.Equal(got, []string{"high"}) {
		t.Fatalf("placed %v once both GPUs freed, want the high-priority task", got)
	}
}

// A team at its ceiling takes nothing from its GPU sub-queues, so no
// other team's task is said to wait behind it in fair share (a task
// asking for no GPU of a team with a share above it was told it waited
// behind the full team).
func TestFairShareReasonPassesOverAFullTeam(t *testing.T) {
	s := New()
	addWorkers(t, s, 2, "w1")
	mustApply(t, s,
		command.CreateTeam{Name: "a", Settings: borrowing(100, 0, limit(0)), Now: at(0)},
		command.CreateTeam{Name: "b", Settings: borrowing(100, 0, nil), Now: at(0)},
		teamJob("ja", "a", 1, 1, 0), teamJob("jb", "b", 1, 0, 0))
	rec, _ := s.Job("jb")
	if strings.Contains(rec.PendingReason, "team a") {
		t.Fatalf("jb waits %q: behind a team that can take nothing", rec.PendingReason)
	}
	if ra, _ := s.Job("ja"); !strings.Contains(ra.PendingReason, "team a at its quota") {
		t.Fatalf("ja waits %q, want its team's room", ra.PendingReason)
	}
}
