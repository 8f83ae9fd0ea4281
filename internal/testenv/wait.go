package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond every 10 ms until it holds, failing the test once
// timeout has passed, with what (asked then, so it can say what was
// seen). It is how tests wait on a condition instead of sleeping; a
// package that may import coordinator/coordinatortest uses its WaitFor,
// which is this one.
func WaitFor(t testing.TB, timeout time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what())
		}
		<-tick.C
	}
}
