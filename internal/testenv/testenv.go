// Package testenv holds what tests of every layer share: the knobs long
// test campaigns take from the environment (how many schedules, from
// which seed), failing the test on a value that is not one, and waiting
// on a condition (WaitFor).
package testenv

import (
	"os"
	"strconv"
	"testing"
)

// Uint returns the unsigned integer in the environment variable name, or
// def when it is unset or empty; it fails t on anything else.
func Uint(t testing.TB, name string, def uint64) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}
