package outputstore

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// A section line as output.Encoder writes it is the task id, then
// the record's fields exactly as the store keeps them (json.Marshal of a
// output.Record): {"task":"T","attempt":1,...,"time":"..."}. A restore
// stores such a line's record as it comes, without decoding it into a
// output.Record and encoding it again, once parseLine has checked that
// the record is written exactly as json.Marshal writes the record it
// decodes to: every field in the encoder's order and spelling, integers
// in their plain form, strings and the time as the encoder writes them,
// and the task id within the section's bounds. Whatever else a section
// holds, parseLine refuses, and the restore decodes it as it always did
// (section.go). Every record in the file is thus json.Marshal's form of
// itself, which a capture writes out as it is (snapshot.go).

const (
	lineTask    = `{"task":`
	lineAttempt = `,"attempt":`
	lineStream  = `,"stream":`
	lineSeq     = `,"seq":`
	lineData    = `,"data":`
	lineTime    = `,"time":`
	lineEnd     = `}`
)

// parseLine returns the task id of line (a section line without its
// newline) and its record's fields (record: the stored record is "{"
// then record), or ok false when line is not in the encoder's form.
func parseLine(line []byte) (task string, record []byte, ok bool) {
	p, ok := bytes.CutPrefix(line, []byte(lineTask))
	if !ok {
		return "", nil, false
	}
	n, escaped := quoted(p)
	if n == 0 {
		return "", nil, false
	}
	if escaped || !utf8.Valid(p[1:n-1]) {
		// As the decoder reads it: escapes undone, bytes that are not
		// UTF-8 made U+FFFD.
		if json.Unmarshal(p[:n], &task) != nil {
			return "", nil, false
		}
	} else {
		task = string(p[1 : n-1])
	}
	if task == "" || len(task) > output.MaxTaskID {
		return "", nil, false
	}
	p = p[n:]
	start := len(line) - len(p) + 1 // the first field's name: "{" is to go before it
	for _, f := range [...]struct {
		name string
		kind byte
	}{{lineAttempt, 'i'}, {lineStream, 's'}, {lineSeq, 'I'}, {lineData, 's'}, {lineTime, 't'}} {
		if p, ok = bytes.CutPrefix(p, []byte(f.name)); !ok {
			return "", nil, false
		}
		switch f.kind {
		case 'i':
			n = integer(p, strconv.IntSize) // output.Record.Attempt is an int
		case 'I':
			n = integer(p, 64)
		case 's':
			n = encodedString(p)
		case 't':
			n = encodedTime(p)
		}
		if n == 0 {
			return "", nil, false
		}
		p = p[n:]
	}
	if string(p) != lineEnd {
		return "", nil, false
	}
	return task, line[start:], true
}

// quoted is the length of the JSON string p begins with (0 when it does
// not begin with one), and whether the string holds escapes.
func quoted(p []byte) (n int, escaped bool) {
	if len(p) == 0 || p[0] != '"' {
		return 0, false
	}
	for i := 1; i < len(p); {
		switch c := p[i]; {
		case c == '"':
			return i + 1, escaped
		case c < 0x20:
			return 0, false
		case c == '\\':
			escaped = true
			if i+1 == len(p) {
				return 0, false
			}
			switch p[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(p) || !isHex(p[i+2:i+6]) {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		default:
			i++
		}
	}
	return 0, false
}

// encodedString is the length of the JSON string p begins with when it
// is written as json.Marshal writes the string it decodes to; 0 when it
// is not (or p does not begin with a string). Printable ASCII but for
// the characters the encoder escapes for HTML, and the escapes for quote,
// backslash, newline, carriage return and tab, are the encoder's form of
// themselves; a string holding anything else is checked by encoding it
// again.
func encodedString(p []byte) int {
	if len(p) == 0 || p[0] != '"' {
		return 0
	}
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 == len(p) || !shortEscape(p[i+1]) {
				return reencodedString(p)
			}
			i++
		case c < 0x20 || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&':
			return reencodedString(p)
		}
	}
	return 0
}

// shortEscape reports whether \c is the encoder's escape of its
// character.
func shortEscape(c byte) bool {
	return c == '"' || c == '\\' || c == 'n' || c == 'r' || c == 't'
}

// reencodedString is encodedString the slow way: decoding the string and
// encoding it again.
func reencodedString(p []byte) int {
	n, _ := quoted(p)
	if n == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(p[:n], &s) != nil {
		return 0
	}
	if again, err := json.Marshal(s); err != nil || !bytes.Equal(again, p[:n]) {
		return 0
	}
	return n
}

// encodedTime is the length of the JSON string p begins with when it is
// a time as time.Time's MarshalJSON writes the time it decodes to; 0
// otherwise.
func encodedTime(p []byte) int {
	n, escaped := quoted(p)
	if n == 0 || escaped {
		return 0
	}
	var t time.Time
	if t.UnmarshalJSON(p[:n]) != nil {
		return 0
	}
	if again, err := t.MarshalJSON(); err != nil || !bytes.Equal(again, p[:n]) {
		return 0
	}
	return n
}

func isHex(p []byte) bool {
	for _, c := range p {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// integer is the length of the integer p begins with, written as
// encoding/json writes one (no fraction, exponent, leading zeros or
// minus zero), when it fits in bits; 0 otherwise.
func integer(p []byte, bits int) int {
	i := 0
	if i < len(p) && p[i] == '-' {
		i++
	}
	switch {
	case i == 0 && i < len(p) && p[i] == '0':
		i++
	case i < len(p) && '1' <= p[i] && p[i] <= '9':
		for i < len(p) && '0' <= p[i] && p[i] <= '9' {
			i++
		}
	default:
		return 0
	}
	if _, err := strconv.ParseInt(string(p[:i]), 10, bits); err != nil {
		return 0
	}
	return i
}
