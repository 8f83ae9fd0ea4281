package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The output section is a stream of JSON objects, one per record: the
// task id beside the record's fields. Both OutputStore implementations
// write it in the same order, so the same output gives the same bytes.

// OutputLine is one record of the output section.
type OutputLine struct {
	Task string `json:"task"`
	LogRecord
}

// OutputEncoder writes an output section.
type OutputEncoder struct{ enc *json.Encoder }

// NewOutputEncoder returns an encoder writing to w.
func NewOutputEncoder(w io.Writer) *OutputEncoder { return &OutputEncoder{enc: json.NewEncoder(w)} }

// Encode writes one record of task.
func (e *OutputEncoder) Encode(task string, r LogRecord) error {
	return e.enc.Encode(OutputLine{Task: task, LogRecord: r})
}

// OutputDecoder reads an output section.
type OutputDecoder struct{ dec *json.Decoder }

// NewOutputDecoder returns a decoder reading r.
func NewOutputDecoder(r io.Reader) *OutputDecoder {
	// Unknown fields are ignored, as in the store's section: a record
	// that gains a field still restores on a coordinator that predates it.
	return &OutputDecoder{dec: json.NewDecoder(r)}
}

// Next returns the next record, io.EOF at the end of the section, or an
// ErrOutputSection.
func (d *OutputDecoder) Next() (OutputLine, error) {
	var l OutputLine
	if err := d.dec.Decode(&l); err != nil {
		if errors.Is(err, io.EOF) {
			return OutputLine{}, io.EOF
		}
		return OutputLine{}, fmt.Errorf("%w: %w", ErrOutputSection, err)
	}
	if l.Task == "" || len(l.Task) > MaxOutputTaskID {
		return OutputLine{}, fmt.Errorf("%w: task id of %d bytes", ErrOutputSection, len(l.Task))
	}
	return l, nil
}
