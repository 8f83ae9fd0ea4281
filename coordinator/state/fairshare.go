package state

import (
	"cmp"
	"slices"
)

// Weighted fair share. Among the tasks that fit a worker, the team with
// the lowest gpus_in_use / weight goes first (ties by team name, so every
// replica and every leader orders the same); within a team, higher
// priority first, then older (pending.Queue.Less). The pending queue keeps
// each team's tasks in sub-queues of their own, so the matcher reads the
// teams in share order and stops at the first team with a task that
// fits: a team's share is read in constant time (teamLoad), and the
// order costs a sort of the teams with work the worker could take.

// sortByShare sorts team names by fair share, lowest first.
func (s *Store) sortByShare(teams []string) []string {
	keys := make([]shareKey, len(teams))
	for i, t := range teams {
		keys[i] = s.shareKeyOf(t)
	}
	slices.SortFunc(keys, compareShareKeys)
	for i, k := range keys {
		teams[i] = k.team
	}
	return teams
}

// shareKey is what compareShare reads of a team, read once per sort.
type shareKey struct {
	team          string
	inUse, weight int64
}

func (s *Store) shareKeyOf(team string) shareKey {
	return shareKey{team: team, inUse: s.inuse.inUse(team), weight: s.teams.Limits(team).Weight}
}

// compareShareKeys is compareShare on keys read beforehand.
func compareShareKeys(a, b shareKey) int {
	return cmp.Or(cmp.Compare(a.inUse*b.weight, b.inUse*a.weight), cmp.Compare(a.team, b.team))
}

// compareShare orders two teams by in use / weight, then by name. The
// shares are compared as cross products of integers: exact, the same on
// every replica.
func (s *Store) compareShare(a, b string) int {
	return compareShareKeys(s.shareKeyOf(a), s.shareKeyOf(b))
}

// TeamShare is a team's place in the fair-share order.
type TeamShare struct {
	Team           string
	CentiGPUsInUse int64
	WeightCenti    int64
	QuotaCentiGPUs int64
	// CeilingCentiGPUs is quota + borrow limit; -1 without bound.
	CeilingCentiGPUs int64
}

// shareOf is team's TeamShare.
func (s *Store) shareOf(team string) TeamShare {
	l := s.teams.Limits(team)
	ceiling := int64(-1)
	if l.Bounded {
		ceiling = l.Ceiling
	}
	return TeamShare{Team: team, CentiGPUsInUse: s.inuse.inUse(team), WeightCenti: l.Weight, QuotaCentiGPUs: l.Quota, CeilingCentiGPUs: ceiling}
}
