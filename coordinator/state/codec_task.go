package state

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A snapshot holds one task record per task ever kept, the largest table
// by count. go-msgpack encodes a record by reflection, and boxes every
// time.Time it writes (six a task with one attempt): 1.4 million
// allocations a snapshot of S6's state, garbage a busy coordinator
// collects while the snapshot streams. appendTask writes a task record
// directly, the bytes go-msgpack writes for it with the snapshot's handle
// (TestTaskRecordBytesMatchTheCodec compares the two on random tasks):
// a map of the JSON field names sorted by name, fields tagged omitempty
// left out when empty, times as the MessagePack timestamp (nil when
// zero), strings as str, bytes as bin, ints in their shortest signed
// form. The rare nested values (artifacts, a rendezvous) are encoded by
// the codec (sub).

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

func mpIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, mpNil)
	}
	return mpInt(b, int64(*p))
}

// recordFields counts and writes one record's map: field (name, write)
// pairs in name order, each written only when present.
type recordFields struct {
	n    int
	body []byte
}

func (r *recordFields) add(name string) {
	r.n++
	r.body = mpString(r.body, name)
}

// appendTask appends t's record as go-msgpack writes it; sub encodes a
// nested value the codec's way (artifacts, a rendezvous).
func appendTask(b []byte, t *Task, scratch *recordFields, sub func(b []byte, v any) ([]byte, error)) ([]byte, error) {
	r := scratch
	r.n, r.body = 0, r.body[:0]
	var err error
	if len(t.Artifacts) > 0 {
		r.add("artifacts")
		if r.body, err = sub(r.body, t.Artifacts); err != nil {
			return b, err
		}
	}
	if t.AttemptID != "" {
		r.add("attempt_id")
		r.body = mpString(r.body, t.AttemptID)
	}
	if len(t.Attempts) > 0 {
		r.add("attempts")
		r.body = mpArrayLen(r.body, len(t.Attempts))
		for i := range t.Attempts {
			if r.body, err = appendAttempt(r.body, &t.Attempts[i], sub); err != nil {
				return b, err
			}
		}
	}
	if t.CancelRequested {
		r.add("cancel_requested")
		r.body = mpBool(r.body, true)
	}
	r.add("created_at")
	r.body = mpTime(r.body, t.CreatedAt)
	if len(t.Devices) > 0 {
		r.add("devices")
		r.body = mpStrings(r.body, t.Devices)
	}
	if t.ExecutedBy != "" {
		r.add("executed_by")
		r.body = mpString(r.body, t.ExecutedBy)
	}
	if t.ExitCode != nil {
		r.add("exit_code")
		r.body = mpIntPtr(r.body, t.ExitCode)
	}
	r.add("id")
	r.body = mpString(r.body, t.ID)
	r.add("index")
	r.body = mpInt(r.body, int64(t.Index))
	r.add("job_id")
	r.body = mpString(r.body, t.JobID)
	r.add("last_log_seq")
	r.body = mpInt(r.body, t.LastLogSeq)
	r.add("lease_expires_at")
	r.body = mpTime(r.body, t.LeaseExpiresAt)
	r.add("lease_seconds")
	r.body = mpInt(r.body, int64(t.LeaseSeconds))
	if t.LogBytes != 0 {
		r.add("log_bytes")
		r.body = mpInt(r.body, int64(t.LogBytes))
	}
	if t.LogCut {
		r.add("log_cut")
		r.body = mpBool(r.body, true)
	}
	if len(t.Output) > 0 {
		r.add("output")
		r.body = mpBytes(r.body, t.Output)
	}
	if t.Preempt != "" {
		r.add("preempt")
		r.body = mpString(r.body, t.Preempt)
	}
	if t.Reason != "" {
		r.add("reason")
		r.body = mpString(r.body, t.Reason)
	}
	r.add("seq")
	r.body = mpUint(r.body, t.Seq)
	r.add("state")
	r.body = mpString(r.body, t.State)
	if t.SubmittedBy != "" {
		r.add("submitted_by")
		r.body = mpString(r.body, t.SubmittedBy)
	}
	r.add("updated_at")
	r.body = mpTime(r.body, t.UpdatedAt)
	if t.WorkerID != "" {
		r.add("worker_id")
		r.body = mpString(r.body, t.WorkerID)
	}
	b = mpMapLen(b, r.n)
	return append(b, r.body...), nil
}

// appendAttempt appends a's record as go-msgpack writes it.
func appendAttempt(b []byte, a *Attempt, sub func(b []byte, v any) ([]byte, error)) ([]byte, error) {
	n := 7 // assigned_at, ended_at, id, number, started_at, state, worker_id
	if len(a.Devices) > 0 {
		n++
	}
	if a.ExitCode != nil {
		n++
	}
	if a.Reason != "" {
		n++
	}
	if a.Rendezvous != nil {
		n++
	}
	b = mpMapLen(b, n)
	b = mpTime(mpString(b, "assigned_at"), a.AssignedAt)
	if len(a.Devices) > 0 {
		b = mpStrings(mpString(b, "devices"), a.Devices)
	}
	b = mpTime(mpString(b, "ended_at"), a.EndedAt)
	if a.ExitCode != nil {
		b = mpIntPtr(mpString(b, "exit_code"), a.ExitCode)
	}
	b = mpString(mpString(b, "id"), a.ID)
	b = mpInt(mpString(b, "number"), int64(a.Number))
	if a.Reason != "" {
		b = mpString(mpString(b, "reason"), a.Reason)
	}
	if a.Rendezvous != nil {
		var err error
		if b, err = sub(mpString(b, "rendezvous"), a.Rendezvous); err != nil {
			return b, err
		}
	}
	b = mpTime(mpString(b, "started_at"), a.StartedAt)
	b = mpString(mpString(b, "state"), a.State)
	b = mpString(mpString(b, "worker_id"), a.WorkerID)
	return b, nil
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

// appendJob appends j's record as go-msgpack writes it; sub encodes the
// spec's rare nested values (resources, target, inputs), scratch is the
// spec's.
func appendJob(b []byte, j *Job, scratch *recordFields, sub func(b []byte, v any) ([]byte, error)) ([]byte, error) {
	b = mpMapLen(b, 8)
	b = mpTime(mpString(b, "created_at"), j.CreatedAt)
	b = mpString(mpString(b, "created_by"), j.CreatedBy)
	b = mpString(mpString(b, "id"), j.ID)
	b = mpUint(mpString(b, "seq"), j.Seq)
	b, err := appendSpec(mpString(b, "spec"), &j.Spec, scratch, sub)
	if err != nil {
		return b, err
	}
	b = mpString(mpString(b, "spec_hash"), j.SpecHash)
	b = mpStrings(mpString(b, "task_ids"), j.TaskIDs)
	return mpTime(mpString(b, "updated_at"), j.UpdatedAt), nil
}

// appendSpec appends a job spec as go-msgpack writes it.
func appendSpec(b []byte, s *command.JobSpec, f *recordFields, sub func(b []byte, v any) ([]byte, error)) ([]byte, error) {
	f.n, f.body = 0, f.body[:0]
	var err error
	if len(s.Affinity) > 0 {
		f.add("affinity")
		f.body = mpBytes(f.body, s.Affinity)
	}
	if s.Capability != "" {
		f.add("capability")
		f.body = mpString(f.body, s.Capability)
	}
	if len(s.Config) > 0 {
		f.add("config")
		f.body = mpBytes(f.body, s.Config)
	}
	if s.Count != 0 {
		f.add("count")
		f.body = mpInt(f.body, int64(s.Count))
	}
	if s.ExclusiveWorker {
		f.add("exclusive_worker")
		f.body = mpBool(f.body, true)
	}
	f.add("executor")
	f.body = mpString(f.body, s.Executor)
	if s.Gang {
		f.add("gang")
		f.body = mpBool(f.body, true)
	}
	if s.IdempotencyKey != "" {
		f.add("idempotency_key")
		f.body = mpString(f.body, s.IdempotencyKey)
	}
	if len(s.Inputs) > 0 {
		f.add("inputs")
		if f.body, err = sub(f.body, s.Inputs); err != nil {
			return b, err
		}
	}
	if s.LeaseSeconds != 0 {
		f.add("lease_seconds")
		f.body = mpInt(f.body, int64(s.LeaseSeconds))
	}
	if s.MaxAttempts != 0 {
		f.add("max_attempts")
		f.body = mpInt(f.body, int64(s.MaxAttempts))
	}
	if s.MaxPerWorker != 0 {
		f.add("max_per_worker")
		f.body = mpInt(f.body, int64(s.MaxPerWorker))
	}
	if s.Name != "" {
		f.add("name")
		f.body = mpString(f.body, s.Name)
	}
	if len(s.Outputs) > 0 {
		f.add("outputs")
		f.body = mpStrings(f.body, s.Outputs)
	}
	if s.Priority != 0 {
		f.add("priority")
		f.body = mpInt(f.body, int64(s.Priority))
	}
	if s.Resources != nil {
		f.add("resources")
		if f.body, err = sub(f.body, s.Resources); err != nil {
			return b, err
		}
	}
	if s.Spread {
		f.add("spread")
		f.body = mpBool(f.body, true)
	}
	if s.Target != nil {
		f.add("target")
		if f.body, err = sub(f.body, s.Target); err != nil {
			return b, err
		}
	}
	if s.TimeoutSeconds != 0 {
		f.add("timeout_seconds")
		f.body = mpInt(f.body, int64(s.TimeoutSeconds))
	}
	return append(mpMapLen(b, f.n), f.body...), nil
}
