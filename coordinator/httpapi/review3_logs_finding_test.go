package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// F6: a log chunk whose seq the task has seen, or that arrives once the
// task's log is full, is answered {"accepted": false} without a Raft
// entry; a chunk that crosses the cap travels trimmed to what the state
// machine needs to see that it crosses, and the stored log is the same.
func TestFindingLogChunksPastCapOrRepeated(t *testing.T) {
	rig := newFindingRig(t)
	post := func(seq int64, data string) string {
		t.Helper()
		rec := rig.do(findingCall{method: "POST", path: "/v1/tasks/j1-0/logs", token: rig.worker,
			body: fmt.Sprintf(`{"attempt_id":"a1","stream":"stdout","seq":%d,"data":%q}`, seq, data)})
		if rec.Code != http.StatusOK {
			t.Fatalf("seq %d: status %d: %s", seq, rec.Code, rec.Body)
		}
		return strings.TrimSpace(rec.Body.String())
	}
	logs := func() []command.AppendLogs { return proposed[command.AppendLogs](rig) }

	if got := post(2, "hello\n"); got != `{"accepted":true}` || len(logs()) != 1 {
		t.Fatalf("first chunk: %s, %d proposals", got, len(logs()))
	}
	for _, seq := range []int64{2, 1} {
		if got := post(seq, "again\n"); got != `{"accepted":false}` {
			t.Fatalf("repeated seq %d answered %s", seq, got)
		}
	}
	if n := len(logs()); n != 1 {
		t.Fatalf("repeated seq proposed: %d AppendLogs entries, want 1", n)
	}

	// Bring the task to 10 bytes under its cap, straight into the store.
	fill := state.MaxLogBytesPerTask - 10 - len("hello\n")
	rig.apply(command.AppendLogs{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", Stream: "stdout", Seq: 3, Data: strings.Repeat("x", fill), Now: time.Now()})

	big := strings.Repeat("y", 4096)
	if got := post(4, big); got != `{"accepted":true}` {
		t.Fatalf("crossing chunk: %s", got)
	}
	l := logs()
	if len(l) != 2 || len(l[1].Data) > 11 {
		t.Fatalf("crossing chunk proposed %d bytes (of %d), want at most the 10 left plus one", len(l[len(l)-1].Data), len(big))
	}
	var last string
	for page := (state.LogPage{More: true}); page.More; {
		var err error
		if page, err = rig.store.LogsPage("j1", page.Next, 0); err != nil {
			t.Fatal(err)
		}
		if n := len(page.Lines); n > 0 {
			last = page.Lines[n-1].Data
		}
	}
	if last != state.TaskOutputMarker {
		t.Fatalf("last stored line %q, want the log-limit marker", last)
	}

	if got := post(5, "more\n"); got != `{"accepted":false}` {
		t.Fatalf("chunk past the cap answered %s", got)
	}
	if n := len(logs()); n != 2 {
		t.Fatalf("chunk past the cap proposed: %d AppendLogs entries, want 2", n)
	}
}
