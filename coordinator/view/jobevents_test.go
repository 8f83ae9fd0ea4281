package view

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every kind the state derives has its wire word, and the bound the
// state keeps is the one the contract names.
func TestJobEventKindsAllHaveWords(t *testing.T) {
	seen := map[string]bool{}
	for k := state.JobSubmitted; k <= state.TaskCancelled; k++ {
		w := eventKinds[k]
		if w == "" || seen[w] {
			t.Fatalf("kind %d: word %q (missing or used twice)", k, w)
		}
		seen[w] = true
	}
	if state.MaxJobEvents != api.MaxJobEvents {
		t.Fatalf("state keeps %d events, the contract says %d", state.MaxJobEvents, api.MaxJobEvents)
	}
}
