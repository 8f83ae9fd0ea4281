package mprecord_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The codec room knows no record type and no other room: it imports the
// standard library and go-msgpack only, so that the state's tables
// declare their codecs on it and not the other way round.
func TestCodecImportsNoOtherRoom(t *testing.T) {
	archtest.Isolated(t, ".", 3, "mprecord is the snapshot's record codec; the state declares its tables on it")
}
