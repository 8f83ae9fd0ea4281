package command

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Decoding errors.
var (
	// ErrUnknownType is returned when decoding an entry with an unknown tag.
	ErrUnknownType = errors.New("command: unknown type")
	// ErrNestedBatch refuses a batch found inside a batch.
	ErrNestedBatch = errors.New("command: nested batch")
)

// Encode renders c as a log entry: its type byte, then its JSON body (a
// Batch: its frame, batchframe.go; an Encoded command: the bytes it holds).
func Encode(c Command) ([]byte, error) {
	switch c := c.(type) {
	case Batch:
		return encodeBatch(c), nil
	case Encoded:
		return c.entry, nil
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode command %d: %w", c.Type(), err)
	}
	passes[c.Type()].encodes.Add(1)
	out := make([]byte, 0, len(body)+1)
	out = append(out, byte(c.Type()))
	return append(out, body...), nil
}

// Decode parses a log entry produced by Encode.
func Decode(b []byte) (Command, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("decode command: empty entry: %w", ErrUnknownType)
	}
	d, ok := decoders[Type(b[0])]
	if !ok {
		return nil, fmt.Errorf("decode command: type %d: %w", b[0], ErrUnknownType)
	}
	if d.typ != TypeBatch {
		passes[d.typ].decodes.Add(1)
	}
	c, err := d.decode(b[1:])
	if err != nil {
		return nil, fmt.Errorf("decode command %d: %w", b[0], err)
	}
	return c, nil
}

// Decoded is one command of a batch, or why it could not be read.
type Decoded struct {
	Command Command
	Err     error
}

// Unbatch decodes a batch's entries, in order. An entry that does not
// decode, or is itself a batch, carries its error instead of a command.
func Unbatch(b Batch) []Decoded {
	out := make([]Decoded, len(b.Entries))
	for i, e := range b.Entries {
		c, err := Decode(e)
		switch {
		case err != nil:
			out[i].Err = err
		case c.Type() == TypeBatch:
			out[i].Err = ErrNestedBatch
		default:
			out[i].Command = c
		}
	}
	return out
}
