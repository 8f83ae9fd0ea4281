//go:build race

package snapcodec

// raceEnabled reports a build with the race detector, which makes the
// codec's property checks several times slower while adding nothing to
// them: each is single-threaded.
const raceEnabled = true
