package state

import (
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// Why a task some live worker could run waits in the queue: its team has
// no room for it (teamroom.go), another team with less than its fair
// share waits too (fairshare.go), or the GPUs it could use are held for
// the task at the head of the order (backfill.go). A task that waits
// only for a GPU to free up says nothing. All of it is read from
// replicated data, so every node says the same.

// queueReason is why a task of j waits in the queue, or "".
func (s *Store) queueReason(j *Job) string {
	team := command.TeamOf(j.Team)
	if why := s.teams.Limits(team).RoomReason(s.inuse.inUse(team), fit.WholeCenti(j.Spec), j.Spec.IsPreemptible()); why != "" {
		return why
	}
	if ahead := s.teamAhead(team); ahead != "" {
		a, me := s.shareOf(ahead), s.shareOf(team)
		return fmt.Sprintf("fair share: behind team %s (%s GPUs in use at weight %s; team %s %s at weight %s)",
			ahead, teams.Centi(a.CentiGPUsInUse), teams.Centi(a.WeightCenti), team, teams.Centi(me.CentiGPUsInUse), teams.Centi(me.WeightCenti))
	}
	if h := s.holdFor(time.Time{}); h != nil && h.JobID != j.ID {
		return h.Reason(s.jobNamedFor(h.JobID, team))
	}
	return ""
}

// teamAhead is the team with queued tasks it could take now that comes
// first in fair-share order, if it comes before team; else "". A team at
// its ceiling takes nothing from its GPU sub-queues (the matcher passes
// over them), so those do not put it ahead of anyone.
func (s *Store) teamAhead(team string) string {
	first := ""
	for _, sq := range s.queue.All() {
		sk, list := sq.Key, sq.Tasks
		if len(list) == 0 || sk.Team == team || (first != "" && s.compareShare(sk.Team, first) >= 0) {
			continue
		}
		if (sk.Size > 0 || sk.Partial) && s.teams.Limits(sk.Team).Full(s.inuse.inUse(sk.Team)) {
			continue
		}
		first = sk.Team
	}
	if first == "" || s.compareShare(first, team) > 0 {
		return ""
	}
	return first
}

// jobNamedFor is how a reason shown to team names job id: by its id
// when it is the team's own, else only by its team, so that a reason
// never tells one team that another's job exists.
func (s *Store) jobNamedFor(id, team string) string {
	if other := command.TeamOf(s.jobs.Get(id).Team); other != team {
		return "a job of team " + other
	}
	return "job " + id
}
