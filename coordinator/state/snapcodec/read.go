package snapcodec

import (
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
)

// recordReader reads a snapshot's records: the large tables through their
// codecs (records.go), with one restore's interner
// (mprecord.Reader).
type recordReader struct{ *mprecord.Reader }

func newRecordReader() *recordReader { return &recordReader{mprecord.NewReader()} }

// finish reads a finish record.
func (d *recordReader) finish(body []byte) (Finish, bool) {
	var f Finish
	ok := mprecord.StrFields(body, []string{"body_hash", "submission", "task"}, &f.BodyHash, &f.Submission, &f.Task)
	return f, ok
}

// pair reads an entry of a string table.
func (d *recordReader) pair(body []byte) (Pair, bool) {
	var p Pair
	ok := mprecord.StrFields(body, []string{"key", "value"}, &p.Key, &p.Value)
	return p, ok
}

// read adds the record of kind in body to snap when it is one the reader
// takes (done); when it is not, nothing is added and the caller decodes
// it with go-msgpack, then calls share.
func (d *recordReader) read(kind uint8, body []byte, snap *Image) (done bool, err error) {
	switch kind {
	case RecCredential:
		if c, ok := credentialCodec.Decode(d.Reader, body); ok {
			snap.Credentials = append(snap.Credentials, c)
			return true, nil
		}
	case RecWorker:
		if w, ok := workerCodec.Decode(d.Reader, body); ok {
			snap.Workers = append(snap.Workers, w)
			return true, nil
		}
	case RecTask:
		if t, ok := d.task(body); ok {
			snap.Tasks = append(snap.Tasks, t)
			return true, nil
		}
	case RecJob:
		if j, ok := jobCodec.Decode(d.Reader, body); ok {
			snap.Jobs = append(snap.Jobs, j)
			return true, nil
		}
	case RecFinish:
		if f, ok := d.finish(body); ok {
			return true, snap.addFinish(f)
		}
	case RecIdempotency:
		if p, ok := d.pair(body); ok {
			return true, snap.addPair(kind, p)
		}
	case RecAudit, RecRefusal:
		if ev, ok := d.audit(body); ok {
			snap.addAudit(kind, ev)
			return true, nil
		}
	}
	return false, nil
}

// share interns the strings of the record go-msgpack just decoded into
// snap, as the reader would have.
func (d *recordReader) share(kind uint8, snap *Image) {
	switch kind {
	case RecWorker:
		if w := last(snap.Workers); w != nil {
			interner(d.Strings()).shareWorker(w)
		}
	case RecJob:
		if j := last(snap.Jobs); j != nil {
			interner(d.Strings()).shareJob(j, d.SharedBins())
		}
	case RecTask:
		if t := last(snap.Tasks); t != nil {
			interner(d.Strings()).shareTask(t)
		}
	}
}

func last[T any](list []*T) *T {
	if len(list) == 0 {
		return nil
	}
	return list[len(list)-1]
}
