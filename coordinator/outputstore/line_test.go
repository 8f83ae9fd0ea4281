package outputstore

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// trickyRecords are records of tasks whose fields hold what JSON
// escapes, the extremes of their types and times in several zones.
func trickyRecords() []output.Op {
	at := time.Date(2026, 12, 4, 12, 0, 0, 123456789, time.UTC)
	return []output.Op{
		{TaskID: "j0123456789abcdef-0", Record: output.Record{Attempt: 1, Stream: "stdout", Seq: 1, Data: "plain line\n", Time: at}},
		{TaskID: "t", Record: output.Record{}},
		{TaskID: "t", Record: output.Record{Attempt: -1, Stream: "", Seq: -1 << 63, Data: "", Time: at.In(time.FixedZone("", 2*3600))}},
		{TaskID: "t", Record: output.Record{Attempt: 1<<63 - 1, Seq: 1<<63 - 1, Time: at.In(time.FixedZone("", -(5*3600 + 30*60)))}},
		{TaskID: "quotes \" and \\ <html> & \u2028", Record: output.Record{Data: "\"q\" \\ \t\r\n\b\f\x00\x1f\x7f <a href=\"x\">&amp;</a> \u2028\u2029 é 漢字 🙂 \ufffd", Stream: "std\"err"}},
		{TaskID: "bad utf-8 \xff", Record: output.Record{Data: "a\xffb\xc3", Time: time.Unix(0, 0).UTC()}},
		{TaskID: "t", Record: output.Record{Data: strings.Repeat("long ", 20000), Time: at.Truncate(time.Second)}},
	}
}

// encoderLines are section lines as output.Encoder writes them
// (without their newlines) of trickyRecords.
func encoderLines(tb testing.TB) [][]byte {
	tb.Helper()
	var lines [][]byte
	for _, op := range trickyRecords() {
		var b bytes.Buffer
		if err := output.NewEncoder(&b).Encode(op.TaskID, op.Record); err != nil {
			tb.Fatal(err)
		}
		lines = append(lines, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return lines
}

// otherLines are lines the encoder never writes: some are records all
// the same (another field order, spacing, escapes), some are not.
var otherLines = []string{
	``, ` `, `{}`, `null`, `[]`, `"task"`, `{"task":"t"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"} `,
	` {"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task": "t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"attempt":1,"task":"t","stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"Task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z","extra":1}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}{"task":"u"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"a\/b","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"a\u003cb","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"a\u003Cb","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"a<b","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00.000Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00+00:00"}`,
	`{"task":"\u0074","attempt":1,"stream":"s","seq":2,"data":"\u0064\/\n","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t\ud800","attempt":1,"stream":"s","seq":2,"data":"\ud83d\ude42\udc00","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"` + strings.Repeat("x", output.MaxTaskID) + `","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"` + strings.Repeat("x", output.MaxTaskID+1) + `","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":01,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":-0,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1.0,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1e2,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":-,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":9223372036854775808,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":"1","stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":null,"seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":1,"time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":null}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"yesterday"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04 12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00\u005a"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T24:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"tab	raw","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"\x","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"\u12","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"\u12G4","time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"open,"time":"2026-12-04T12:00:00Z"}`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"`,
	`{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d\`,
}

// decoded is what output.Decoder makes of line, the reference
// parseLine must agree with.
func decoded(line []byte) (output.Line, error) {
	dec := output.NewDecoder(bytes.NewReader(line))
	l, err := dec.Next()
	if err != nil {
		return l, err
	}
	if _, err := dec.Next(); err != io.EOF {
		return l, io.ErrUnexpectedEOF // more than one record
	}
	return l, nil
}

// checkLine fails unless parseLine refuses line or reads what the
// decoder reads: the same task, and a stored record that is json.Marshal
// of the decoder's record, byte for byte.
func checkLine(t *testing.T, line []byte) (ok bool) {
	t.Helper()
	task, record, ok := parseLine(line)
	if !ok {
		return false
	}
	want, err := decoded(line)
	if err != nil {
		t.Fatalf("parseLine took %q, which the decoder refuses: %v", line, err)
	}
	stored, err := json.Marshal(want.Record)
	if err != nil {
		t.Fatal(err)
	}
	if task != want.Task || string(stored) != "{"+string(record) {
		t.Fatalf("parseLine read %q as %q %q; the decoder as %q, stored as %q", line, task, "{"+string(record), want.Task, stored)
	}
	return true
}

// Every line the encoder writes is taken as it is, but for one of bytes
// that are not UTF-8 (which the encoder writes as \ufffd, and the record
// it decodes to as U+FFFD itself); lines of other forms are refused or
// read as the decoder reads them.
func TestParseLine(t *testing.T) {
	for _, line := range encoderLines(t) {
		if !checkLine(t, line) && !bytes.Contains(line, []byte(`\ufffd`)) {
			t.Errorf("parseLine refused the encoder's %.200q", line)
		}
	}
	took := 0
	for _, line := range otherLines {
		if checkLine(t, []byte(line)) {
			took++
		}
	}
	if took == 0 || took == len(otherLines) {
		t.Errorf("parseLine took %d of %d other lines: the table no longer tries both ways", took, len(otherLines))
	}
}

func FuzzParseLine(f *testing.F) {
	for _, line := range encoderLines(f) {
		f.Add(line)
	}
	for _, line := range otherLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkLine(t, line) })
}
