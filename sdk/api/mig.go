package api

import "regexp"

// MaxMIGProfileBytes bounds a MIG profile name.
const MaxMIGProfileBytes = 32

// migProfilePattern is a MIG profile as NVIDIA names them: GPU slices and
// memory ("1g.10gb", "7g.80gb"), a compute-instance slice of a GPU
// instance ("1c.3g.40gb"), and the media-engine variants ("1g.10gb+me").
var migProfilePattern = regexp.MustCompile(`^([1-8]c\.)?[1-8]g\.[0-9]{1,4}gb(\+me)?$`)

// ValidMIGProfile reports whether p is a MIG profile of NVIDIA's form,
// as resources.mig_profile and a MIG device's mig_profile must be.
func ValidMIGProfile(p string) bool {
	return len(p) <= MaxMIGProfileBytes && migProfilePattern.MatchString(p)
}
