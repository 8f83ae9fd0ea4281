package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// prepareUnsectioned prepares a snapshot written before sections: the
// store's JSON alone, with the task output in its "logs" field, which
// becomes the output section (so a coordinator upgraded onto its old
// snapshot keeps the output in it). Such a snapshot was held in memory
// whole when it was written, and is read so again, once; the output
// section is encoded as the output store reads it (a pipe), not beside
// it in memory.
func (f *FSM) prepareUnsectioned(r io.Reader) (*state.PreparedTables, output.Restore, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	var legacy struct {
		Logs map[string][]output.Record `json:"logs"`
	}
	// A snapshot that does not decode is refused by the store's Restore.
	_ = json.Unmarshal(data, &legacy)
	tables, err := state.PrepareTables(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(encodeLegacyLogs(pw, legacy.Logs)) }()
	out, err := f.store.PrepareOutput(pr)
	_ = pr.CloseWithError(errPrepared) // stops the encoder if Prepare stopped first
	if err != nil {
		return nil, nil, err
	}
	return tables, out, nil
}

// errPrepared ends the encoding of a legacy snapshot's output once the
// output store has stopped reading it.
var errPrepared = errors.New("fsm: output section no longer read")

// encodeLegacyLogs writes logs as an output section, tasks in byte order.
func encodeLegacyLogs(w io.Writer, logs map[string][]output.Record) error {
	enc := output.NewEncoder(w)
	for _, id := range slices.Sorted(maps.Keys(logs)) {
		for _, rec := range logs[id] {
			if err := enc.Encode(id, rec); err != nil {
				return err
			}
		}
	}
	return nil
}
