package view

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/jobhistory"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every kind the state derives has its wire word, and the bound the
// state keeps is the one the contract names.
func TestJobEventKindsAllHaveWords(t *testing.T) {
	seen := map[string]bool{}
	for k := range jobhistory.JobEventKinds {
		w := eventKinds[k]
		if w == "" || seen[w] {
			t.Fatalf("kind %d: word %q (missing or used twice)", k, w)
		}
		seen[w] = true
	}
	if jobhistory.MaxJobEvents != api.MaxJobEvents {
		t.Fatalf("state keeps %d events, the contract says %d", jobhistory.MaxJobEvents, api.MaxJobEvents)
	}
}
