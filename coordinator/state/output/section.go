package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The output section is a stream of JSON objects, one per record: the
// task id beside the record's fields. Both Store implementations
// write it in the same order, so the same output gives the same bytes.

// Line is one record of the output section.
type Line struct {
	Task string `json:"task"`
	Record
}

// Encoder writes an output section.
type Encoder struct{ enc *json.Encoder }

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{enc: json.NewEncoder(w)} }

// Encode writes one record of task.
func (e *Encoder) Encode(task string, r Record) error {
	return e.enc.Encode(Line{Task: task, Record: r})
}

// Decoder reads an output section.
type Decoder struct{ dec *json.Decoder }

// NewDecoder returns a decoder reading r.
func NewDecoder(r io.Reader) *Decoder {
	// Unknown fields are ignored, as in the store's section: a record
	// that gains a field still restores on a coordinator that predates it.
	return &Decoder{dec: json.NewDecoder(r)}
}

// Next returns the next record, io.EOF at the end of the section, or an
// ErrSection.
func (d *Decoder) Next() (Line, error) {
	var l Line
	if err := d.dec.Decode(&l); err != nil {
		if errors.Is(err, io.EOF) {
			return Line{}, io.EOF
		}
		return Line{}, fmt.Errorf("%w: %w", ErrSection, err)
	}
	if l.Task == "" || len(l.Task) > MaxTaskID {
		return Line{}, fmt.Errorf("%w: task id of %d bytes", ErrSection, len(l.Task))
	}
	return l, nil
}
