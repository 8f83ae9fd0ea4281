package outputstore

import (
	"bytes"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/coordinator/state/output/outputtest"
)

// A capture writes records as they are stored; the section is the one
// output.Encoder writes of them, byte for byte, as output.Mem's
// capture is.
func TestCaptureWritesAsTheEncoder(t *testing.T) {
	ops := append(trickyRecords(), output.Op{TaskID: "t", Delete: true})
	ops = append(ops, trickyRecords()...)
	s, ref := openTemp(t), output.NewMem()
	for _, out := range []output.Store{s, ref} {
		if err := out.Write(ops); err != nil {
			t.Fatal(err)
		}
	}
	got, want := outputtest.Capture(t, s), outputtest.Capture(t, ref)
	if !bytes.Equal(got, want) {
		t.Fatalf("captured\n%.3000s\nthe encoder writes\n%.3000s", got, want)
	}
	if !bytes.Contains(got, []byte(`\u003chtml\u003e`)) {
		t.Fatalf("the capture holds no escaped record: %.300s", got)
	}
}
