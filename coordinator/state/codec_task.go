package state

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A snapshot holds one task record per task ever kept, the largest table
// by count. go-msgpack encodes a record by reflection, and boxes every
// time.Time it writes (six a task with one attempt): 1.4 million
// allocations a snapshot of S6's state, garbage a busy coordinator
// collects while the snapshot streams. recordWriter writes a task record
// directly, the bytes go-msgpack writes for it with the snapshot's handle
// (TestTaskRecordBytesMatchTheCodec compares the two on random tasks):
// a map of the JSON field names sorted by name, fields tagged omitempty
// left out when empty, times as the MessagePack timestamp (nil when
// zero), strings as str, bytes as bin, ints in their shortest signed
// form. The rare nested values are encoded by the codec (recordWriter).

// msgpack marker bytes used here.
const (
	mpNil      = 0xc0
	mpFalse    = 0xc2
	mpTrue     = 0xc3
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpExt8     = 0xc7
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt8     = 0xd0
	mpInt16    = 0xd1
	mpInt32    = 0xd2
	mpInt64    = 0xd3
	mpFixExt4  = 0xd6
	mpFixExt8  = 0xd7
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpMap16    = 0xde
	mpMap32    = 0xdf
	mpFixStr   = 0xa0
	mpFixArray = 0x90
	mpFixMap   = 0x80
	mpTimeTag  = 0xff // the timestamp extension, -1
)

func mpLen(b []byte, l int, fixMin byte, fixCut int, b8, b16, b32 byte) []byte {
	switch {
	case fixCut > 0 && l < fixCut:
		return append(b, fixMin|byte(l))
	case b8 != 0 && l < 256:
		return append(b, b8, byte(l))
	case l < 65536:
		return binary.BigEndian.AppendUint16(append(b, b16), uint16(l))
	default:
		return binary.BigEndian.AppendUint32(append(b, b32), uint32(l))
	}
}

func mpString(b []byte, s string) []byte {
	b = mpLen(b, len(s), mpFixStr, 32, mpStr8, mpStr16, mpStr32)
	return append(b, s...)
}

func mpBytes(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, mpNil)
	}
	b = mpLen(b, len(v), 0, 0, mpBin8, mpBin16, mpBin32)
	return append(b, v...)
}

func mpMapLen(b []byte, n int) []byte {
	return mpLen(b, n, mpFixMap, 16, 0, mpMap16, mpMap32)
}

func mpArrayLen(b []byte, n int) []byte {
	return mpLen(b, n, mpFixArray, 16, 0, mpArray16, mpArray32)
}

func mpBool(b []byte, v bool) []byte {
	if v {
		return append(b, mpTrue)
	}
	return append(b, mpFalse)
}

func mpUint(b []byte, i uint64) []byte {
	switch {
	case i <= math.MaxInt8:
		return append(b, byte(i))
	case i <= math.MaxUint8:
		return append(b, mpUint8, byte(i))
	case i <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, mpUint16), uint16(i))
	case i <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, mpUint32), uint32(i))
	default:
		return binary.BigEndian.AppendUint64(append(b, mpUint64), i)
	}
}

func mpInt(b []byte, i int64) []byte {
	switch {
	case i > math.MaxInt8 && i <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(append(b, mpInt16), uint16(i))
	case i > math.MaxInt8 && i <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(b, mpInt32), uint32(i))
	case i > math.MaxInt8:
		return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(i))
	case i >= -32:
		return append(b, byte(i))
	case i >= math.MinInt8:
		return append(b, mpInt8, byte(i))
	case i >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, mpInt16), uint16(i))
	case i >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, mpInt32), uint32(i))
	default:
		return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(i))
	}
}

func mpTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, mpNil)
	}
	t = t.UTC()
	sec, nsec := t.Unix(), uint64(t.Nanosecond())
	if sec >= 0 && sec>>34 == 0 {
		data := nsec<<34 | uint64(sec)
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, mpFixExt4, mpTimeTag), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, mpFixExt8, mpTimeTag), data)
	}
	b = append(b, mpExt8, 12, mpTimeTag)
	b = binary.BigEndian.AppendUint32(b, uint32(nsec))
	return binary.BigEndian.AppendUint64(b, uint64(sec))
}

func mpStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, mpNil)
	}
	b = mpArrayLen(b, len(list))
	for _, s := range list {
		b = mpString(b, s)
	}
	return b
}

// recordWriter writes the records of the large tables without
// reflection: tasks with their attempts, and jobs with their specs. Its
// scratch buffers are reused from one record to the next; the rare
// nested values (artifacts, a rendezvous, a spec's resources, target and
// inputs) go through go-msgpack (nested).
type recordWriter struct {
	task, attempt, spec  record
	worker, device, cred record
	audit                record
	buf                  []byte
	enc                  *codec.Encoder
}

func newRecordWriter() *recordWriter {
	w := &recordWriter{}
	w.enc = codec.NewEncoderBytes(&w.buf, msgpackHandle())
	for _, r := range []*record{&w.task, &w.attempt, &w.spec, &w.worker, &w.device, &w.cred, &w.audit} {
		r.nest = w.nested
	}
	return w
}

// nested appends v as go-msgpack encodes it.
func (w *recordWriter) nested(b []byte, v any) ([]byte, error) {
	w.buf = w.buf[:0]
	w.enc.ResetBytes(&w.buf)
	if err := w.enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, w.buf...), nil
}

// record builds one record's map: its fields are added in name order,
// the optional ones (omitempty) only when not empty, and the map's
// length is counted as they come.
type record struct {
	n    int
	body []byte
	err  error
	nest func(b []byte, v any) ([]byte, error)
}

func (r *record) reset() { r.n, r.body, r.err = 0, r.body[:0], nil }

func (r *record) key(name string) {
	r.n++
	r.body = mpString(r.body, name)
}

func (r *record) str(name, v string)         { r.key(name); r.body = mpString(r.body, v) }
func (r *record) int(name string, v int64)   { r.key(name); r.body = mpInt(r.body, v) }
func (r *record) uint(name string, v uint64) { r.key(name); r.body = mpUint(r.body, v) }
func (r *record) time(name string, v time.Time) {
	r.key(name)
	r.body = mpTime(r.body, v)
}

// strings writes list, nil as nil (not omitted).
func (r *record) strings(name string, list []string) {
	r.key(name)
	r.body = mpStrings(r.body, list)
}

func (r *record) bool(name string, v bool) {
	r.key(name)
	r.body = mpBool(r.body, v)
}

func (r *record) optStr(name, v string) {
	if v != "" {
		r.str(name, v)
	}
}

func (r *record) optInt(name string, v int64) {
	if v != 0 {
		r.int(name, v)
	}
}

func (r *record) optIntPtr(name string, v *int) {
	if v != nil {
		r.int(name, int64(*v))
	}
}

func (r *record) optBool(name string, v bool) {
	if v {
		r.key(name)
		r.body = mpBool(r.body, true)
	}
}

func (r *record) optStrings(name string, list []string) {
	if len(list) > 0 {
		r.strings(name, list)
	}
}

func (r *record) optBytes(name string, v []byte) {
	if len(v) > 0 {
		r.key(name)
		r.body = mpBytes(r.body, v)
	}
}

// optNested writes v through go-msgpack when present is set.
func (r *record) optNested(name string, v any, present bool) {
	if !present {
		return
	}
	r.key(name)
	if r.err == nil {
		r.body, r.err = r.nest(r.body, v)
	}
}

// appendTo appends the record's map to b.
func (r *record) appendTo(b []byte) ([]byte, error) {
	return append(mpMapLen(b, r.n), r.body...), r.err
}

// appendTask appends t's record as go-msgpack writes it.
func (w *recordWriter) appendTask(b []byte, t *Task) ([]byte, error) {
	r := &w.task
	r.reset()
	r.optNested("artifacts", t.Artifacts, len(t.Artifacts) > 0)
	r.optStr("attempt_id", t.AttemptID)
	if len(t.Attempts) > 0 {
		r.key("attempts")
		r.body = mpArrayLen(r.body, len(t.Attempts))
		for i := range t.Attempts {
			var err error
			if r.body, err = w.appendAttempt(r.body, &t.Attempts[i]); err != nil && r.err == nil {
				r.err = err
			}
		}
	}
	r.optBool("cancel_requested", t.CancelRequested)
	r.time("created_at", t.CreatedAt)
	r.optStrings("devices", t.Devices)
	r.optStr("executed_by", t.ExecutedBy)
	r.optIntPtr("exit_code", t.ExitCode)
	r.str("id", t.ID)
	r.int("index", int64(t.Index))
	r.str("job_id", t.JobID)
	r.int("last_log_seq", t.LastLogSeq)
	r.time("lease_expires_at", t.LeaseExpiresAt)
	r.int("lease_seconds", int64(t.LeaseSeconds))
	r.optInt("log_bytes", int64(t.LogBytes))
	r.optBool("log_cut", t.LogCut)
	r.optBytes("output", t.Output)
	r.optStr("preempt", t.Preempt)
	r.optStr("reason", t.Reason)
	r.uint("seq", t.Seq)
	r.str("state", t.State)
	r.optStr("submitted_by", t.SubmittedBy)
	r.time("updated_at", t.UpdatedAt)
	r.optStr("worker_id", t.WorkerID)
	return r.appendTo(b)
}

// appendAttempt appends a's record as go-msgpack writes it.
func (w *recordWriter) appendAttempt(b []byte, a *Attempt) ([]byte, error) {
	r := &w.attempt
	r.reset()
	r.time("assigned_at", a.AssignedAt)
	r.optStrings("devices", a.Devices)
	r.time("ended_at", a.EndedAt)
	r.optIntPtr("exit_code", a.ExitCode)
	r.str("id", a.ID)
	r.int("number", int64(a.Number))
	r.optStr("reason", a.Reason)
	r.optNested("rendezvous", a.Rendezvous, a.Rendezvous != nil)
	r.time("started_at", a.StartedAt)
	r.str("state", a.State)
	r.str("worker_id", a.WorkerID)
	return r.appendTo(b)
}

// appendFinish appends a finish record as go-msgpack writes it.
func appendFinish(b []byte, f snapFinish) []byte {
	b = mpMapLen(b, 3)
	b = mpString(mpString(b, "body_hash"), f.BodyHash)
	b = mpString(mpString(b, "submission"), f.Submission)
	return mpString(mpString(b, "task"), f.Task)
}

// appendPair appends an entry of a string table as go-msgpack writes it.
func appendPair(b []byte, p snapPair) []byte {
	b = mpMapLen(b, 2)
	b = mpString(mpString(b, "key"), p.Key)
	return mpString(mpString(b, "value"), p.Value)
}

// appendJob appends j's record, spec included, as go-msgpack writes it.
func (w *recordWriter) appendJob(b []byte, j *Job) ([]byte, error) {
	b = mpMapLen(b, 8)
	b = mpTime(mpString(b, "created_at"), j.CreatedAt)
	b = mpString(mpString(b, "created_by"), j.CreatedBy)
	b = mpString(mpString(b, "id"), j.ID)
	b = mpUint(mpString(b, "seq"), j.Seq)
	b, err := w.appendSpec(mpString(b, "spec"), &j.Spec)
	if err != nil {
		return b, err
	}
	b = mpString(mpString(b, "spec_hash"), j.SpecHash)
	b = mpStrings(mpString(b, "task_ids"), j.TaskIDs)
	return mpTime(mpString(b, "updated_at"), j.UpdatedAt), nil
}

// appendSpec appends a job spec as go-msgpack writes it.
func (w *recordWriter) appendSpec(b []byte, s *command.JobSpec) ([]byte, error) {
	r := &w.spec
	r.reset()
	r.optBytes("affinity", s.Affinity)
	r.optStr("capability", s.Capability)
	r.optBytes("config", s.Config)
	r.optInt("count", int64(s.Count))
	r.optBool("exclusive_worker", s.ExclusiveWorker)
	r.str("executor", s.Executor)
	r.optBool("gang", s.Gang)
	r.optStr("idempotency_key", s.IdempotencyKey)
	r.optNested("inputs", s.Inputs, len(s.Inputs) > 0)
	r.optInt("lease_seconds", int64(s.LeaseSeconds))
	r.optInt("max_attempts", int64(s.MaxAttempts))
	r.optInt("max_per_worker", int64(s.MaxPerWorker))
	r.optStr("name", s.Name)
	r.optStrings("outputs", s.Outputs)
	r.optInt("priority", int64(s.Priority))
	r.optNested("resources", s.Resources, s.Resources != nil)
	r.optBool("spread", s.Spread)
	r.optNested("target", s.Target, s.Target != nil)
	r.optInt("timeout_seconds", int64(s.TimeoutSeconds))
	return r.appendTo(b)
}
