package fsm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state"
)

// Check passes what a restore takes and refuses, with the same error,
// what a restore refuses: the output section is checked, not kept.
func TestCheck(t *testing.T) {
	src := New(state.New())
	apply(t, src, running()...)
	apply(t, src, out(1, "from the snapshot\n"), out(2, "more\n"))
	good, bad := badSnapshots(t, src)
	legacy, err := os.ReadFile(filepath.Join("testdata", "unsectioned-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := append([]badSnapshot{{"good", good, nil}, {"unsectioned", legacy, nil}}, bad...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(bytes.NewReader(c.snap))
			if !errors.Is(err, c.want) { // errors.Is(nil, nil) holds
				t.Errorf("check: %v, want %v", err, c.want)
			}
		})
	}
}
