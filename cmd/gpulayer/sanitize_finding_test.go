package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// F7 (third review): text from others reaches a terminal only escaped.
// A job named with an OSC title sequence and CSI, as a C1 rune and as a
// raw byte, is listed by the real binary without one raw ESC, BEL or CSI
// byte; an error quoting such text says it escaped too; JSON stays exact.
func TestFindingCLIEscapesUntrustedText(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	name := "\x1b]0;pwned\x07\u009b31m\x9b31m"
	job, err := h.Client(t, h.AdminToken).SubmitJob(t.Context(), api.JobSpec{Name: name, Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GPULAYER_ADDR=" + h.URL, "GPULAYER_TOKEN=" + h.AdminToken}
	for _, tc := range []struct {
		name string
		args []string
		want string // escaped text the output must hold
	}{
		{"list wide", []string{"job", "list", "-o", "wide"}, `\x1b]0;pwned\x07\u009b31m`},
		{"status of an unknown id", []string{"job", "status", "j\x1b]0;pwned\x07\u009b31m"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, env, tc.args...)
			out := r.stdout + r.stderr
			for _, b := range []byte{0x1b, 0x07, 0x9b} { // 0x9b also ends U+009B's UTF-8
				if i := strings.IndexByte(out, b); i >= 0 {
					t.Fatalf("raw byte %#x in the output at %d: %q", b, i, out)
				}
			}
			if !strings.Contains(out, tc.want) {
				t.Fatalf("output lacks %q: %q", tc.want, out)
			}
		})
	}
	r := run(t, env, "job", "status", job.ID, "-o", "json")
	var got api.Job
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("json output %q: %v", r.stdout, err)
	}
	if got.Name != job.Name || !strings.HasPrefix(got.Name, "\x1b]0;pwned\x07\u009b31m") {
		t.Fatalf("JSON name %q, want the submitted %q unchanged", got.Name, job.Name)
	}
}
