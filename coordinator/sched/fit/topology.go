package fit

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Topology-aware placement. A task that needs several GPUs gets the set
// of free, fitting GPUs that are best connected to each other by what its
// worker reported (command.DeviceLink): the set whose weakest pair is the
// strongest, then whose pairs are strongest in sum, then the lowest
// indices. The set is ordered as a chain, each GPU followed by its
// best-connected remaining peer, which is the order the agent gives the
// task in CUDA_VISIBLE_DEVICES (ring collectives pass data between
// neighbours). A worker that reported no topology gets its GPUs in index
// order, as before.

// Link scores: any NVLink path above any PCIe path, NVLink paths by their
// link count (a bandwidth proxy), PCIe paths by how near their common
// ancestor is.
var pathScores = map[string]int{
	"nvlink": 1000, "nvswitch": 1000,
	"board": 900, "pix": 500, "pxb": 400, "phb": 300, "node": 200, "sys": 100,
}

// linkScore rates one link (0: unknown).
func linkScore(l command.DeviceLink) int {
	s := pathScores[l.Path]
	if s >= 1000 {
		s += 100 * min(l.NvLinks, 36)
	}
	return s
}

// exhaustiveLimit bounds the sets examined one by one; past it the choice
// is greedy. C(16, 8) = 12,870 sets stays exhaustive.
const exhaustiveLimit = 20_000

// PickConnected chooses k of devs (in index order) and returns their
// UUIDs in chain order.
func PickConnected(devs []command.Device, k int) []string {
	n := len(devs)
	score, linked := scoreMatrix(devs)
	if k <= 1 || !linked {
		out := make([]string, k)
		for i := range k {
			out[i] = devs[i].UUID
		}
		return out
	}
	var set []int
	if binomial(n, k) <= exhaustiveLimit {
		set = bestSet(score, n, k)
	} else {
		set = greedySet(score, n, k)
	}
	chain := orderChain(score, set)
	out := make([]string, len(chain))
	for i, d := range chain {
		out[i] = devs[d].UUID
	}
	return out
}

// scoreMatrix rates every pair of devs from their links (the better of
// the two directions' reports); linked is false when none has a link.
func scoreMatrix(devs []command.Device) (score [][]int, linked bool) {
	at := make(map[string]int, len(devs))
	for i, d := range devs {
		at[d.UUID] = i
	}
	score = make([][]int, len(devs))
	for i := range score {
		score[i] = make([]int, len(devs))
	}
	for i, d := range devs {
		for _, l := range d.Links {
			if j, ok := at[l.Peer]; ok && j != i {
				s := linkScore(l)
				score[i][j], score[j][i] = max(score[i][j], s), max(score[j][i], s)
				linked = true
			}
		}
	}
	return score, linked
}

// rate is a set's (weakest pair, sum of pairs).
func rate(score [][]int, set []int) (weakest, sum int) {
	weakest = -1
	for a := range set {
		for b := a + 1; b < len(set); b++ {
			s := score[set[a]][set[b]]
			sum += s
			if weakest < 0 || s < weakest {
				weakest = s
			}
		}
	}
	return weakest, sum
}

// bestSet tries every k-subset of 0..n-1 in lexicographic order and keeps
// the first best.
func bestSet(score [][]int, n, k int) []int {
	set := make([]int, k)
	for i := range set {
		set[i] = i
	}
	best := slices.Clone(set)
	bw, bs := rate(score, set)
	for {
		// next combination
		i := k - 1
		for i >= 0 && set[i] == n-k+i {
			i--
		}
		if i < 0 {
			return best
		}
		set[i]++
		for j := i + 1; j < k; j++ {
			set[j] = set[j-1] + 1
		}
		if w, s := rate(score, set); w > bw || (w == bw && s > bs) {
			best, bw, bs = slices.Clone(set), w, s
		}
	}
}

// greedySet starts from the best pair and adds, one at a time, the device
// whose weakest link to the set is strongest (then the strongest in sum).
func greedySet(score [][]int, n, k int) []int {
	a, b := 0, 1
	for i := range n {
		for j := i + 1; j < n; j++ {
			if score[i][j] > score[a][b] {
				a, b = i, j
			}
		}
	}
	set := []int{a, b}
	in := map[int]bool{a: true, b: true}
	for len(set) < k {
		pick, pw, ps := -1, -1, -1
		for c := range n {
			if in[c] {
				continue
			}
			w, s := -1, 0
			for _, m := range set {
				s += score[c][m]
				if w < 0 || score[c][m] < w {
					w = score[c][m]
				}
			}
			if w > pw || (w == pw && s > ps) {
				pick, pw, ps = c, w, s
			}
		}
		set = append(set, pick)
		in[pick] = true
	}
	slices.Sort(set)
	return set
}

// orderChain orders a set from its lowest index, each next device the
// remaining one best connected to the last (ties: the lower index).
func orderChain(score [][]int, set []int) []int {
	left := slices.Clone(set)
	chain := []int{left[0]}
	left = left[1:]
	for len(left) > 0 {
		last, pick := chain[len(chain)-1], 0
		for i, c := range left {
			if score[last][c] > score[last][left[pick]] {
				pick = i
			}
		}
		chain = append(chain, left[pick])
		left = slices.Delete(left, pick, pick+1)
	}
	return chain
}

// binomial is C(n, k), saturating past exhaustiveLimit.
func binomial(n, k int) int {
	k = min(k, n-k)
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1)
		if c > exhaustiveLimit {
			return exhaustiveLimit + 1
		}
	}
	return c
}
