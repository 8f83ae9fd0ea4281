//go:build !race

package state

// raceEnabled reports a build with the race detector.
const raceEnabled = false
