package place

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// Weighted fair share. Among the tasks that fit a worker, the team with
// the lowest gpus_in_use / weight goes first (ties by team name, so every
// replica and every leader orders the same); within a team, higher
// priority first, then older (pending.Queue.Less). The pending queue
// keeps each team's tasks in sub-queues of their own, so the matcher
// reads the teams in share order and stops at the first team with a
// task that fits: a team's use is read in constant time (the view's
// InUse), and the order costs a sort of the teams with queued work.

// Shares is what the fair-share order reads of the teams.
type Shares interface {
	// InUse is what team's active tasks hold, in hundredths of a GPU.
	InUse(team string) int64
	// Limits is team's quota, ceiling and weight (a team gone since:
	// the defaults).
	Limits(team string) teams.Limits
}

// shareKey is what CompareShare reads of a team, read once per sort.
type shareKey struct {
	team          string
	inUse, weight int64
}

func shareKeyOf(v Shares, team string) shareKey {
	return shareKey{team: team, inUse: v.InUse(team), weight: v.Limits(team).Weight}
}

// compareShareKeys orders two teams by in use / weight, then by name.
// The shares are compared as cross products of integers: exact, the same
// on every replica.
func compareShareKeys(a, b shareKey) int {
	return cmp.Or(cmp.Compare(a.inUse*b.weight, b.inUse*a.weight), cmp.Compare(a.team, b.team))
}

// ByShare sorts team names in place by fair share, lowest first, and
// returns them.
func ByShare(v Shares, names []string) []string {
	keys := make([]shareKey, len(names))
	for i, t := range names {
		keys[i] = shareKeyOf(v, t)
	}
	slices.SortFunc(keys, compareShareKeys)
	for i, k := range keys {
		names[i] = k.team
	}
	return names
}

// CompareShare orders teams a and b by fair share, then by name.
func CompareShare(v Shares, a, b string) int {
	return compareShareKeys(shareKeyOf(v, a), shareKeyOf(v, b))
}

// Share is a team's place in the fair-share order.
type Share struct {
	Team           string
	CentiGPUsInUse int64
	WeightCenti    int64
	QuotaCentiGPUs int64
	// CeilingCentiGPUs is quota + borrow limit; -1 without bound.
	CeilingCentiGPUs int64
}

// ShareOf is team's place in the fair-share order.
func ShareOf(v Shares, team string) Share {
	l := v.Limits(team)
	ceiling := int64(-1)
	if l.Bounded {
		ceiling = l.Ceiling
	}
	return Share{Team: team, CentiGPUsInUse: v.InUse(team), WeightCenti: l.Weight, QuotaCentiGPUs: l.Quota, CeilingCentiGPUs: ceiling}
}
