// Package room is a room that reaches into others, for archtest's own
// test of Isolated.
package room

import (
	_ "net/http"

	_ "github.com/gpulayer/gpulayer/internal/countw"
)
