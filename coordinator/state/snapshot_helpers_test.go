package state

import (
	"bytes"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec/snaptest"
)

// encodeCurrent writes c as a snapshot of the current version.
func encodeCurrent(t testing.TB, c *Capture) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodeV1 writes c as a version 1 (JSON) snapshot.
func encodeV1(t testing.TB, c *Capture) []byte { return snaptest.V1(t, encodeCurrent(t, c)) }

// encodeV2 writes c as a version 2 snapshot, before finish records.
func encodeV2(t testing.TB, c *Capture) []byte { return snaptest.V2(t, encodeCurrent(t, c)) }

// decodeSnapshot decodes a snapshot without loading it.
func decodeSnapshot(t testing.TB, b []byte) *snapcodec.Image { return snaptest.Decode(t, b) }

var (
	withRecord    = snaptest.WithRecord
	withRawRecord = snaptest.WithRawRecord
)
