package httpapi

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// A job list cursor is opaque to clients: the base64url form of "j1:" and
// the sequence number of the last job of the page. Pages list jobs below
// it, so jobs created meanwhile never shift a later page.
const jobCursorPrefix = "j1:"

// jobCursor encodes the next-page position (0: no next page, "").
func jobCursor(seq uint64) string {
	if seq == 0 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(jobCursorPrefix + strconv.FormatUint(seq, 10)))
}

// parseJobCursor decodes an after parameter ("" : from the newest job).
func parseJobCursor(v string) (uint64, error) {
	if v == "" {
		return 0, nil
	}
	bad := invalidf("after is not a cursor this coordinator handed out; pass the next of a previous page")
	if len(v) > 64 {
		return 0, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return 0, bad
	}
	num, ok := strings.CutPrefix(string(raw), jobCursorPrefix)
	if !ok {
		return 0, bad
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || seq == 0 {
		return 0, bad
	}
	return seq, nil
}
