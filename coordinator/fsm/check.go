package fsm

import (
	"errors"
	"io"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// checkOutput is the output store of a snapshot being checked (Check):
// Prepare decodes the output section and keeps only the ids of the tasks
// it holds output for, which the restore checks against the store
// section. It holds nothing else, so a snapshot's output is checked in
// memory that does not grow with it.
type checkOutput struct{}

var _ output.Store = checkOutput{}

// errCheckOnly answers what a store being checked is never asked.
var errCheckOnly = errors.New("fsm: output of a snapshot being checked is not kept")

func (checkOutput) Write([]output.Op) error                        { return errCheckOnly }
func (checkOutput) Read(string, int, int) ([]output.Record, error) { return nil, errCheckOnly }
func (checkOutput) Count(string) (int, error)                      { return 0, nil }
func (checkOutput) Capture() (output.Capture, error)               { return nil, errCheckOnly }

// Prepare decodes the section, keeping each task's id.
func (checkOutput) Prepare(r io.Reader) (output.Restore, error) {
	tasks := map[string]struct{}{}
	dec := output.NewDecoder(r)
	for {
		l, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return checkedOutput(slices.Sorted(maps.Keys(tasks))), nil
		}
		if err != nil {
			return nil, err
		}
		tasks[l.Task] = struct{}{}
	}
}

// checkedOutput is a checked output section: the tasks it holds output
// for.
type checkedOutput []string

func (c checkedOutput) Tasks() []string { return c }
func (checkedOutput) Commit() error     { return nil }
func (checkedOutput) Discard()          {}
