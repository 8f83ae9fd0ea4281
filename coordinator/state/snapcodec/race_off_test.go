//go:build !race

package snapcodec

// raceEnabled reports a build with the race detector.
const raceEnabled = false
