package teams

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Team room. A team's quota is guaranteed; past it the team may borrow
// idle GPUs up to quota + borrow limit (no borrow limit: without bound).
// A job that may not be preempted runs only within its team's quota.

// ErrRoom is wrapped by an assignment refused for its team's room (a
// conflict: the state is not what the proposer saw).
var ErrRoom = fmt.Errorf("team at its limit: %w", stateerr.ErrConflict)

// Limits are a team's quota and, unless unbounded, its ceiling (quota +
// borrow limit), in hundredths of a GPU, and its weight: what placement
// reads of a team's settings.
type Limits struct {
	Name    string
	Quota   int64
	Ceiling int64
	Bounded bool
	Weight  int64
}

// Limits reads team's settings; a team without a record (default before
// an admin set it, or one deleted since its jobs were submitted) has no
// quota, no borrow limit and weight 1.
func (t *Table) Limits(team string) Limits {
	l := Limits{Name: team, Weight: DefaultWeightCenti}
	rec, ok := t.Get(team)
	if !ok {
		return l
	}
	st := rec.Settings
	l.Quota = st.QuotaCentiGPUs
	if st.WeightCenti > 0 {
		l.Weight = st.WeightCenti
	}
	if st.BorrowLimitCenti != nil {
		l.Bounded, l.Ceiling = true, st.QuotaCentiGPUs+*st.BorrowLimitCenti
	}
	return l
}

// RoomFor returns nil when team (holding inUse) may take centi more for
// a job, preemptible or not, else why not, wrapping ErrRoom.
func (l Limits) RoomFor(inUse, need int64, preemptible bool) error {
	if why := l.RoomReason(inUse, need, preemptible); why != "" {
		return fmt.Errorf("%s: %w", why, ErrRoom)
	}
	return nil
}

// RoomReason is RoomFor's refusal as a pending reason, or "".
func (l Limits) RoomReason(inUse, need int64, preemptible bool) string {
	switch {
	case need <= 0:
		return ""
	case !preemptible && inUse+need > l.Quota:
		return fmt.Sprintf("team %s at its quota for jobs that may not be preempted: %s of %s GPUs in use, the task needs %s",
			l.Name, Centi(inUse), Centi(l.Quota), Centi(need))
	case preemptible && l.Bounded && inUse+need > l.Ceiling:
		return fmt.Sprintf("team %s at its quota: %s of %s GPUs in use, borrow limit %s, the task needs %s",
			l.Name, Centi(inUse), Centi(l.Quota), Centi(l.Ceiling-l.Quota), Centi(need))
	}
	return ""
}

// Full reports whether the team can take no GPU at all now for a
// preemptible job (the matcher then passes over its GPU sub-queues).
func (l Limits) Full(inUse int64) bool {
	return l.Bounded && inUse >= l.Ceiling && inUse >= l.Quota
}
