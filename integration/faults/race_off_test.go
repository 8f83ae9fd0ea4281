//go:build !race

package faults

// raceEnabled reports a build with the race detector, which makes a
// schedule several times slower.
const raceEnabled = false
