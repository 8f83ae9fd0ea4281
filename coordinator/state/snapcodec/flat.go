package snapcodec

import "github.com/gpulayer/gpulayer/coordinator/state/mprecord"

// appendFinish appends a finish record as go-msgpack writes it.
func appendFinish(b []byte, f Finish) []byte {
	b = mprecord.AppendMapLen(b, 3)
	b = mprecord.AppendString(mprecord.AppendString(b, "body_hash"), f.BodyHash)
	b = mprecord.AppendString(mprecord.AppendString(b, "submission"), f.Submission)
	return mprecord.AppendString(mprecord.AppendString(b, "task"), f.Task)
}

// appendPair appends an entry of a string table as go-msgpack writes it.
func appendPair(b []byte, p Pair) []byte {
	b = mprecord.AppendMapLen(b, 2)
	b = mprecord.AppendString(mprecord.AppendString(b, "key"), p.Key)
	return mprecord.AppendString(mprecord.AppendString(b, "value"), p.Value)
}
