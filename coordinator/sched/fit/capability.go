package fit

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// AcceptedCapabilities lists the task capabilities a worker takes under an
// acquire's narrowing capability, or reports that it takes any.
func AcceptedCapabilities(workerCaps []string, narrow string) (caps []string, anyCap bool) {
	if len(workerCaps) == 0 {
		return nil, false
	}
	star := slices.Contains(workerCaps, "*")
	if narrow != "" {
		if star || slices.Contains(workerCaps, narrow) {
			return []string{narrow}, false
		}
		return nil, false
	}
	if star {
		return nil, true
	}
	caps = append([]string{""}, workerCaps...)
	slices.Sort(caps)
	return slices.Compact(caps), false
}

// CapabilityAllows applies the capability rules: ["*"] takes anything,
// no capabilities take nothing, names take tasks whose capability is listed
// or empty. The acquire request's capability narrows further.
func CapabilityAllows(workerCaps []string, narrow, want string) bool {
	if len(workerCaps) == 0 {
		return false
	}
	if narrow != "" {
		if want != narrow {
			return false
		}
		if !slices.Contains(workerCaps, "*") && !slices.Contains(workerCaps, narrow) {
			return false
		}
		return true
	}
	if want == "" || slices.Contains(workerCaps, "*") {
		return true
	}
	return slices.Contains(workerCaps, want)
}

// compareCapability orders two compute capabilities ("9.0", "10.0",
// "8.6") by major then minor number, as numbers: "10.0" is above "9.0".
// A part that is not a number counts as 0.
func compareCapability(a, b string) int {
	am, an := splitCapability(a)
	bm, bn := splitCapability(b)
	return cmp.Or(cmp.Compare(am, bm), cmp.Compare(an, bn))
}

func splitCapability(v string) (major, minor int) {
	maj, mnr, _ := strings.Cut(v, ".")
	major, _ = strconv.Atoi(maj)
	minor, _ = strconv.Atoi(mnr)
	return major, minor
}
