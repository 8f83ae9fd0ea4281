//go:build race

package state

// raceEnabled reports a build with the race detector, which makes the
// codec's property checks several times slower while adding nothing to
// them: each is single-threaded.
const raceEnabled = true
