package health

import (
	"strings"
	"testing"
	"time"
)

func cond(k Kind, name, why string) *Observation {
	return &Observation{UUID: gpu, Kind: k, Condition: name, Detail: why}
}

// A condition degrades a healthy GPU while it is seen and for the
// hold-down window after; a fault still takes the GPU out, and the
// conditions show again once it is back.
func TestDegradedConditions(t *testing.T) {
	hold := 10 * time.Minute
	cases := []struct {
		name  string
		steps []step
		// reason the last step's status must contain
		reason string
	}{
		{"a condition degrades, its end holds for the hold-down, then healthy", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, cond(Degrade, CondThrottle, "HW thermal slowdown"), Degraded, false},
			{time.Minute, cond(Undegrade, CondThrottle, ""), Degraded, false},
			{time.Minute + hold - time.Second, nil, Degraded, false},
			{time.Minute + hold, nil, Healthy, false},
		}, ""},
		{"a condition back within the hold-down starts the wait over", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, cond(Degrade, CondCorrectedECC, "many"), Degraded, false},
			{time.Minute, cond(Undegrade, CondCorrectedECC, ""), Degraded, false},
			{5 * time.Minute, cond(Degrade, CondCorrectedECC, "many"), Degraded, false},
			{time.Minute + hold, nil, Degraded, false},
		}, "ecc-corrected: many"},
		{"two conditions: healthy only when both are gone", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, cond(Degrade, CondThrottle, "HW slowdown"), Degraded, false},
			{time.Second, cond(Degrade, CondStuck, "busy with no process"), Degraded, false},
			{time.Minute, cond(Undegrade, CondThrottle, ""), Degraded, false},
			{time.Minute + hold, nil, Degraded, false},
		}, "stuck: busy with no process"},
		{"a fault outranks a condition; the condition shows after the recovery", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, cond(Degrade, CondRetirePending, "pages wait for a reset"), Degraded, false},
			{time.Minute, obs(XidError, 48), Unhealthy, true},
			{2 * time.Minute, obs(NoRecoveryPending, 0), Recovering, false},
			{2*time.Minute + hold, nil, Degraded, false},
		}, "retire-pending: pages wait for a reset"},
		{"an unknown GPU stays unknown with a condition", []step{
			{0, cond(Degrade, CondThrottle, "HW slowdown"), Unknown, false},
		}, "not watched yet"},
		{"too many retired pages: unhealthy until an operator clears it", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, &Observation{UUID: gpu, Kind: TooManyRetiredPages, Detail: "61 pages"}, Unhealthy, true},
			{time.Minute, obs(NoRecoveryPending, 0), Unhealthy, false},
			{3 * hold, nil, Unhealthy, false},
		}, "too many retired memory pages: 61 pages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := runSteps(t, New(Policy{HoldDown: hold}, t0, "boot-a", []string{gpu}, nil), c.steps)
			if !strings.Contains(st.Reason(), c.reason) {
				t.Fatalf("reason %q, want it to contain %q", st.Reason(), c.reason)
			}
		})
	}
}

// A degraded status is not carried over a restart: its conditions are
// measured again. Nor is it a change every poll: the same condition seen
// again changes nothing.
func TestDegradedIsMeasuredNotSaved(t *testing.T) {
	tr := New(Policy{}, t0, "boot-a", []string{gpu}, nil)
	tr.Observe(t0, *obs(Watched, 0))
	if eff := tr.Observe(t0, *cond(Degrade, CondThrottle, "HW slowdown")); !eff.Changed {
		t.Fatal("a new condition is not a change")
	}
	if eff := tr.Observe(t0.Add(time.Second), *cond(Degrade, CondThrottle, "HW slowdown")); eff.Changed {
		t.Fatal("the same condition seen again is a change")
	}
	dir := t.TempDir()
	if err := Save(dir, tr.Statuses()); err != nil {
		t.Fatal(err)
	}
	saved, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 1 || saved[0].State != Degraded {
		t.Fatalf("saved %+v, want the degraded status", saved)
	}
	next := New(Policy{}, t0, "boot-a", []string{gpu}, saved)
	if st := next.Status(gpu); st.State != Unknown {
		t.Fatalf("after a restart: %+v, want unknown until watched", st)
	}
	next.Observe(t0, *obs(Watched, 0))
	if st := next.Status(gpu); st.State != Healthy {
		t.Fatalf("after a restart, watched: %+v, want healthy until a condition is seen again", st)
	}
}
