package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// The logs route reads the output a bounded page at a time: a job with
// several pages of output still answers all of it, in order, once, with
// and without follow.
func TestLogsRouteAnswersEveryPage(t *testing.T) {
	rig := newStreamRig(t, StreamLimits{WriteTimeout: 5 * time.Second, MaxLife: time.Minute})
	var want []string
	for i := range 5 {
		chunk := fmt.Sprintf("%d%s\n", i, strings.Repeat("x", state.LogPageBytes*7/10))
		rig.write(chunk)
		want = append(want, chunk)
	}
	rig.finish()
	c, err := client.New(client.Config{Addrs: []string{rig.srv.URL}, Token: rig.token})
	if err != nil {
		t.Fatal(err)
	}
	for _, follow := range []bool{false, true} {
		t.Run(fmt.Sprint("follow=", follow), func(t *testing.T) {
			var got []string
			err := c.Logs(t.Context(), rig.jobID, follow, func(e api.LogEntry) error { got = append(got, e.Data); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("entry %d starts %q, want %q", i, got[i][:4], want[i][:4])
				}
			}
		})
	}
}
