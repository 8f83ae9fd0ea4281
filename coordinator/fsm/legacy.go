package fsm

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state"
)

// restoreUnsectioned restores a snapshot written before sections: the
// store's JSON alone, with the task output in its "logs" field, which
// becomes the output section (so a coordinator upgraded onto its old
// snapshot keeps the output in it). Such a snapshot was held in memory
// whole when it was written, and is read so again, once.
func (f *FSM) restoreUnsectioned(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var legacy struct {
		Logs map[string][]state.LogRecord `json:"logs"`
	}
	// A snapshot that does not decode is refused by the store's Restore.
	_ = json.Unmarshal(data, &legacy)
	var section bytes.Buffer
	enc := state.NewOutputEncoder(&section)
	for _, id := range slices.Sorted(maps.Keys(legacy.Logs)) {
		for _, rec := range legacy.Logs[id] {
			if err := enc.Encode(id, rec); err != nil {
				return err
			}
		}
	}
	out, err := f.store.PrepareOutput(&section)
	if err != nil {
		return err
	}
	return f.store.RestoreWithOutput(bytes.NewReader(data), out)
}
