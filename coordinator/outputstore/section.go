package outputstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// sectionReader reads a restore's output section a record at a time.
// Lines in the encoder's form (parseLine) give their record as stored,
// undecoded. From the first line that is not, the rest of the section
// goes through output.Decoder, the reader every section went
// through before: a section of another form is decoded, or refused with
// the same error, as it was. Memory holds a line at a time.
type sectionReader struct {
	br   *bufio.Reader
	long []byte          // a line longer than br's buffer
	slow *output.Decoder // the rest of the section, once a line is not in the encoder's form
}

// maxLongLine bounds a line read whole: a record of the largest chunk,
// escaped. A longer one goes to the decoder, which reads it as it comes.
const maxLongLine = 8 << 20

func newSectionReader(r io.Reader) *sectionReader {
	return &sectionReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next record: its task and the record as the store
// keeps it ("{" then record: the record's fields and its closing brace),
// which the next call may overwrite; io.EOF at the end of the section, or
// the decoder's error.
func (sr *sectionReader) next() (task string, record []byte, err error) {
	if sr.slow != nil {
		return sr.decode()
	}
	line, err := sr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		sr.long = sr.long[:0]
		for errors.Is(err, bufio.ErrBufferFull) && len(sr.long)+len(line) <= maxLongLine {
			sr.long = append(sr.long, line...)
			line, err = sr.br.ReadSlice('\n')
		}
		sr.long = append(sr.long, line...)
		line = sr.long
	}
	if err == nil {
		if task, record, ok := parseLine(line[:len(line)-1]); ok {
			return task, record, nil
		}
	} else if errors.Is(err, io.EOF) && len(line) == 0 {
		return "", nil, io.EOF
	}
	// Not a line in the encoder's form: the decoder reads the section
	// from this line's start on, then what br holds and reads, or the
	// error br stopped at.
	tail := io.Reader(sr.br)
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
		tail = errReader{err}
	}
	sr.slow = output.NewDecoder(io.MultiReader(bytes.NewReader(bytes.Clone(line)), tail))
	sr.long = nil
	return sr.decode()
}

func (sr *sectionReader) decode() (string, []byte, error) {
	l, err := sr.slow.Next()
	if err != nil {
		return "", nil, err
	}
	v, err := json.Marshal(l.Record)
	if err != nil {
		return "", nil, err
	}
	return l.Task, v[1:], nil
}

// errReader answers every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
