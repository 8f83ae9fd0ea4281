package artifactrepair

import (
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
)

// Plan picks, among records (in digest order), the artifacts that have
// fewer live holders (holders among members) than min(2, len(members)),
// starting after the digest after and wrapping around, at most limit of
// them and, after the first, maxBytes in all. Targets are the members
// that hold no copy and can be reached, this coordinator (self) first.
// An artifact without a live holder cannot be copied: it is counted in
// lost. more reports whether the bounds left some out. It reads nothing
// but its arguments.
func Plan(records []artifacts.Artifact, self string, members []string, reachable func(string) bool, after string, limit int, maxBytes int64) (plan []Replication, lost int, more bool) {
	need := min(2, len(members))
	start, _ := slices.BinarySearchFunc(records, after, func(a artifacts.Artifact, d string) int { return strings.Compare(a.Digest, d) })
	if start < len(records) && records[start].Digest == after {
		start++
	}
	var bytes int64
	for i := range records {
		a := records[(start+i)%len(records)]
		var live []string
		for _, h := range a.Holders {
			if slices.Contains(members, h) {
				live = append(live, h)
			}
		}
		if len(live) >= need {
			continue
		}
		if len(live) == 0 {
			lost++
			continue
		}
		var targets []string
		if slices.Contains(members, self) && !slices.Contains(a.Holders, self) {
			targets = append(targets, self)
		}
		for _, m := range members {
			if m != self && !slices.Contains(a.Holders, m) && reachable(m) {
				targets = append(targets, m)
			}
		}
		if len(targets) == 0 {
			continue
		}
		if len(plan) == limit || (len(plan) > 0 && bytes+a.Size > maxBytes) {
			more = true
			continue
		}
		bytes += a.Size
		plan = append(plan, Replication{Digest: a.Digest, Size: a.Size, Copies: need - len(live), Sources: live, Targets: targets})
	}
	return plan, lost, more
}
