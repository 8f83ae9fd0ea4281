package outputstore

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/coordinator/state/output/outputtest"
)

// failingReader reads r, then fails with err, once: reads after that
// find the end.
type failingReader struct {
	r      io.Reader
	err    error
	failed bool
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF && !f.failed {
		f.failed = true
		return n, f.err
	}
	return n, err
}

// A section restores to what the decoder (output.Mem's Prepare)
// makes of it, whatever its form, and one the decoder refuses is refused
// with the decoder's error: lines in the encoder's form that come before
// others change neither.
func TestSectionsRestoreAsDecoded(t *testing.T) {
	var good bytes.Buffer
	for _, line := range encoderLines(t) {
		good.Write(line)
		good.WriteByte('\n')
	}
	g := good.String()
	pretty := "{\n  \"task\": \"t\",\n  \"seq\": 7,\n  \"data\": \"pretty\"\n}\n"
	huge := `{"task":"huge","data":"` + strings.Repeat("h", maxLongLine) + `"}` + "\n"
	boom := errors.New("boom")
	sections := []struct {
		name    string
		open    func() io.Reader
		refused bool
	}{
		{"empty", func() io.Reader { return strings.NewReader("") }, false},
		{"encoder's", func() io.Reader { return strings.NewReader(g) }, false},
		{"no last newline", func() io.Reader { return strings.NewReader(strings.TrimSuffix(g, "\n")) }, false},
		{"blank lines after", func() io.Reader { return strings.NewReader(g + "\n  \n\t") }, false},
		{"another form part-way", func() io.Reader {
			return strings.NewReader(g + `{"task": "t","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}` + "\n" + g)
		}, false},
		{"records over lines part-way", func() io.Reader { return strings.NewReader(g + pretty + g) }, false},
		{"two records a line part-way", func() io.Reader { return strings.NewReader(g + `{"task":"t","seq":2}{"task":"u","seq":3}` + "\n" + g) }, false},
		{"a line past the long-line bound", func() io.Reader { return strings.NewReader(g + huge + g) }, false},
		{"cut inside a record", func() io.Reader { return strings.NewReader(g[:len(g)-5]) }, true},
		{"garbage part-way", func() io.Reader { return strings.NewReader(g + "hello\n" + g) }, true},
		{"a field of another type part-way", func() io.Reader {
			return strings.NewReader(g + `{"task":"t","attempt":1,"stream":"s","seq":"2","data":"d","time":"2026-12-04T12:00:00Z"}` + "\n" + g)
		}, true},
		{"a bad time part-way", func() io.Reader {
			return strings.NewReader(g + `{"task":"t","attempt":1,"stream":"s","seq":2,"data":"d","time":"yesterday"}` + "\n" + g)
		}, true},
		{"no task id part-way", func() io.Reader {
			return strings.NewReader(g + `{"task":"","attempt":1,"stream":"s","seq":2,"data":"d","time":"2026-12-04T12:00:00Z"}` + "\n" + g)
		}, true},
		{"a task id too long part-way", func() io.Reader {
			return strings.NewReader(g + `{"task":"` + strings.Repeat("x", output.MaxTaskID+1) + `","seq":2}` + "\n" + g)
		}, true},
		{"a reader failing at a line's end", func() io.Reader { return &failingReader{r: strings.NewReader(g), err: boom} }, true},
		{"a reader failing inside a line", func() io.Reader { return &failingReader{r: strings.NewReader(g[:len(g)-9]), err: boom} }, true},
		{"a reader failing inside a long line", func() io.Reader { return &failingReader{r: strings.NewReader(g + huge[:200<<10]), err: boom} }, true},
		{"never ending garbage", func() io.Reader { return badSection{} }, true},
	}
	for _, sec := range sections {
		t.Run(sec.name, func(t *testing.T) {
			ref := output.NewMem()
			want, wantErr := ref.Prepare(sec.open())
			s := openTemp(t)
			got, err := s.Prepare(sec.open())
			if refused := wantErr != nil; refused != sec.refused {
				t.Fatalf("the decoder refuses the section: %v, want %v", wantErr, sec.refused)
			}
			if wantErr != nil || err != nil {
				if got != nil {
					got.Discard()
				}
				if wantErr == nil || err == nil || err.Error() != wantErr.Error() ||
					errors.Is(err, output.ErrSection) != errors.Is(wantErr, output.ErrSection) {
					t.Fatalf("Prepare: %v; the decoder: %v", err, wantErr)
				}
				return
			}
			if err := want.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := got.Commit(); err != nil {
				t.Fatal(err)
			}
			if a, b := outputtest.Capture(t, s), outputtest.Capture(t, ref); !bytes.Equal(a, b) {
				t.Fatalf("restored as\n%.2000s\nthe decoder's restore captures\n%.2000s", a, b)
			}
		})
	}
}
