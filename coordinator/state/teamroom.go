package state

import (
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
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
var ErrTeamRoom = teams.ErrRoom

// teamLoad counts the hundredths of a GPU each team's active tasks hold.
// It is derived (given with each assignment, taken back when the attempt
// ends, rebuilt at restore), so a match reads a team's use in constant
// time instead of walking the fleet.
type teamLoad struct {
	byTeam map[string]int64
	byTask map[string]heldBy
}

// heldBy is what one active task holds, for which team, and when it is
// expected to end (backfill.EndOf).
type heldBy struct {
	team  string
	centi int64
	end   backfill.End
}

func newTeamLoad() *teamLoad {
	return &teamLoad{byTeam: map[string]int64{}, byTask: map[string]heldBy{}}
}

// hold notes that task taskID of team now holds centi until about end.
func (l *teamLoad) hold(taskID, team string, centi int64, end backfill.End) {
	l.release(taskID)
	l.byTask[taskID] = heldBy{team: team, centi: centi, end: end}
	l.byTeam[team] += centi
}

// started notes a held task's expected end anew, from its start.
func (l *teamLoad) started(taskID string, end backfill.End) {
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

// endOf is when active task taskID is expected to end (zero if it holds
// nothing).
func (l *teamLoad) endOf(taskID string) backfill.End { return l.byTask[taskID].end }

// inUse is what team's active tasks hold, in hundredths of a GPU.
func (l *teamLoad) inUse(team string) int64 { return l.byTeam[team] }
