package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// Team room. A team's quota is guaranteed; past it the team may borrow
// idle GPUs up to quota + borrow limit (no borrow limit: without bound).
// A job that may not be preempted runs only within its team's quota. The
// matcher passes over what a team has no room for, and the state machine
// refuses such an assignment again when it applies it (two acquires
// racing cannot both take a team's last room), from replicated data
// only: the teams' settings and the GPUs their active tasks hold.

// ErrTeamRoom is wrapped by an assignment refused for its team's room
// (a conflict: the state is not what the proposer saw).
var ErrTeamRoom = fmt.Errorf("team at its limit: %w", ErrConflict)

// teamLoad counts the hundredths of a GPU each team's active tasks hold.
// It is derived (given with each assignment, taken back when the attempt
// ends, rebuilt at restore), so a match reads a team's use in constant
// time instead of walking the fleet.
type teamLoad struct {
	byTeam map[string]int64
	byTask map[string]heldBy
}

// heldBy is what one active task holds, for which team, and when it is
// expected to end (backfill.go).
type heldBy struct {
	team  string
	centi int64
	end   deviceEnd
}

func newTeamLoad() *teamLoad {
	return &teamLoad{byTeam: map[string]int64{}, byTask: map[string]heldBy{}}
}

// hold notes that task taskID of team now holds centi until about end.
func (l *teamLoad) hold(taskID, team string, centi int64, end deviceEnd) {
	l.release(taskID)
	l.byTask[taskID] = heldBy{team: team, centi: centi, end: end}
	l.byTeam[team] += centi
}

// started notes a held task's expected end anew, from its start.
func (l *teamLoad) started(taskID string, end deviceEnd) {
	if h, ok := l.byTask[taskID]; ok {
		h.end = end
		l.byTask[taskID] = h
	}
}

// release takes back what task taskID held, if anything.
func (l *teamLoad) release(taskID string) {
	h, ok := l.byTask[taskID]
	if !ok {
		return
	}
	delete(l.byTask, taskID)
	if l.byTeam[h.team] -= h.centi; l.byTeam[h.team] == 0 {
		delete(l.byTeam, h.team)
	}
}

// inUse is what team's active tasks hold, in hundredths of a GPU.
func (l *teamLoad) inUse(team string) int64 { return l.byTeam[team] }

// teamLimits are a team's quota and, unless unbounded, its ceiling
// (quota + borrow limit), in hundredths of a GPU, and its weight.
type teamLimits struct {
	name    string
	quota   int64
	ceiling int64
	bounded bool
	weight  int64
}

// limitsOf reads team's settings; a team without a record (default
// before an admin set it, or one deleted since its jobs were submitted)
// has no quota, no borrow limit and weight 1.
func (s *Store) limitsOf(team string) teamLimits {
	l := teamLimits{name: team, weight: teams.DefaultWeightCenti}
	t, ok := s.teams.Get(team)
	if !ok {
		return l
	}
	st := t.Settings
	l.quota = st.QuotaCentiGPUs
	if st.WeightCenti > 0 {
		l.weight = st.WeightCenti
	}
	if st.BorrowLimitCenti != nil {
		l.bounded, l.ceiling = true, st.QuotaCentiGPUs+*st.BorrowLimitCenti
	}
	return l
}

// roomFor returns nil when team (holding inUse) may take centi more for
// a job, preemptible or not, else why not, wrapping ErrTeamRoom.
func (l teamLimits) roomFor(inUse, need int64, preemptible bool) error {
	if why := l.roomReason(inUse, need, preemptible); why != "" {
		return fmt.Errorf("%s: %w", why, ErrTeamRoom)
	}
	return nil
}

// roomReason is roomFor's refusal as a pending reason, or "".
func (l teamLimits) roomReason(inUse, need int64, preemptible bool) string {
	switch {
	case need <= 0:
		return ""
	case !preemptible && inUse+need > l.quota:
		return fmt.Sprintf("team %s at its quota for jobs that may not be preempted: %s of %s GPUs in use, the task needs %s",
			l.name, teams.Centi(inUse), teams.Centi(l.quota), teams.Centi(need))
	case preemptible && l.bounded && inUse+need > l.ceiling:
		return fmt.Sprintf("team %s at its quota: %s of %s GPUs in use, borrow limit %s, the task needs %s",
			l.name, teams.Centi(inUse), teams.Centi(l.quota), teams.Centi(l.ceiling-l.quota), teams.Centi(need))
	}
	return ""
}

// full reports whether the team can take no GPU at all now for a
// preemptible job (the matcher then passes over its GPU sub-queues).
func (l teamLimits) full(inUse int64) bool {
	return l.bounded && inUse >= l.ceiling && inUse >= l.quota
}

// checkTeamRoom is the state machine's check of an assignment of centi
// to a task of j.
func (s *Store) checkTeamRoom(j *Job, need int64) error {
	team := command.TeamOf(j.Team)
	return s.limitsOf(team).roomFor(s.inuse.inUse(team), need, j.Spec.IsPreemptible())
}
