package httpapi

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every bound of an exec request, each refused with invalid_argument, and
// the requests at the bounds accepted.
func TestValidateExec(t *testing.T) {
	many := make([]string, api.MaxExecArgs)
	for i := range many {
		many[i] = "x"
	}
	for _, c := range []struct {
		name string
		req  api.ExecRequest
		ok   bool
	}{
		{"a program", api.ExecRequest{Command: []string{"true"}}, true},
		{"at the argument bound", api.ExecRequest{Command: many}, true},
		{"a tty of a size", api.ExecRequest{Command: []string{"sh"}, TTY: true, Rows: 24, Cols: 80}, true},
		{"a tty at its largest", api.ExecRequest{Command: []string{"sh"}, TTY: true, Rows: api.MaxExecTermSize, Cols: api.MaxExecTermSize}, true},
		{"no command", api.ExecRequest{}, false},
		{"an empty program", api.ExecRequest{Command: []string{"", "x"}}, false},
		{"one argument over", api.ExecRequest{Command: append(many, "x")}, false},
		{"too many bytes", api.ExecRequest{Command: []string{"echo", strings.Repeat("a", api.MaxExecCommandBytes)}}, false},
		{"a NUL", api.ExecRequest{Command: []string{"echo", "a\x00b"}}, false},
		{"invalid UTF-8", api.ExecRequest{Command: []string{"echo", "\xff"}}, false},
		{"a size without a tty", api.ExecRequest{Command: []string{"sh"}, Rows: 24, Cols: 80}, false},
		{"rows without cols", api.ExecRequest{Command: []string{"sh"}, TTY: true, Rows: 24}, false},
		{"a size too large", api.ExecRequest{Command: []string{"sh"}, TTY: true, Rows: 24, Cols: api.MaxExecTermSize + 1}, false},
		{"a negative size", api.ExecRequest{Command: []string{"sh"}, TTY: true, Rows: -1, Cols: 80}, false},
	} {
		err := validateExec(c.req)
		if c.ok != (err == nil) || (err != nil && codeFor(err) != api.CodeInvalidArgument) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
