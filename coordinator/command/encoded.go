package command

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// Encoded is a command already rendered as its log entry, so that
// proposing it encodes nothing again: Encode returns its bytes as they
// are, and a state machine given one in process decodes it (the one
// decode every replica makes of every entry).
type Encoded struct {
	typ   Type
	entry []byte
}

// Type is the type of the command it holds.
func (e Encoded) Type() Type { return e.typ }

// Entry is the log entry. The caller must not change it.
func (e Encoded) Entry() []byte { return e.entry }

// Decode decodes the command it holds.
func (e Encoded) Decode() (Command, error) { return Decode(e.entry) }

// SpecDigestPrefix marks a digest taken over a spec's encoding, as
// SubmitJob entries carry it: the digest written before it (state's
// legacy SpecHash, taken over a re-encoding through a generic value)
// has no prefix, and the two are compared only each as its own kind.
const SpecDigestPrefix = "s2:"

// EncodeSubmit renders a submit as its log entry with one pass over the
// spec: the spec is encoded once, its digest is the SHA-256 of those
// bytes, and the entry embeds them as they are. It returns the entry,
// with SpecHash set to that digest, and the spec's encoded size, which
// the job-size bound reads.
func EncodeSubmit(c SubmitJob) (Encoded, int, error) {
	spec, err := json.Marshal(c.Spec)
	if err != nil {
		return Encoded{}, 0, fmt.Errorf("encode job spec: %w", err)
	}
	passes[TypeSubmitJob].encodes.Add(1)
	hash := specDigest(spec)
	body, err := json.Marshal(submitEntry{
		JobID: c.JobID, TaskIDs: c.TaskIDs, Spec: json.RawMessage(spec), CreatedBy: c.CreatedBy,
		Now: c.Now, MaxPendingJobs: c.MaxPendingJobs, SpecHash: hash, Team: c.Team,
	})
	if err != nil {
		return Encoded{}, 0, fmt.Errorf("encode command %d: %w", TypeSubmitJob, err)
	}
	entry := make([]byte, 0, len(body)+1)
	entry = append(append(entry, byte(TypeSubmitJob)), body...)
	return Encoded{typ: TypeSubmitJob, entry: entry}, len(spec), nil
}

// SpecDigest is the digest EncodeSubmit gives spec, taken again from the
// spec itself (a recorded job's digest compared with an older kind's).
func SpecDigest(spec JobSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		return ""
	}
	passes[TypeSubmitJob].encodes.Add(1)
	return specDigest(b)
}

// LegacySpecDigest is the digest of a spec that submits carried before
// EncodeSubmit: three passes (encode, decode into a generic value, encode
// again, which sorts every object's keys), all counted.
func LegacySpecDigest(spec JobSpec) string {
	b, _ := json.Marshal(spec)
	var v any
	_ = json.Unmarshal(b, &v)
	b, _ = json.Marshal(v)
	passes[TypeSubmitJob].encodes.Add(2)
	passes[TypeSubmitJob].decodes.Add(1)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func specDigest(encoded []byte) string {
	sum := sha256.Sum256(encoded)
	return SpecDigestPrefix + hex.EncodeToString(sum[:])
}

// submitEntry is SubmitJob as its entry is written by EncodeSubmit: the
// same keys, the spec carried as the bytes encoded once.
type submitEntry struct {
	JobID          string          `json:"job_id"`
	TaskIDs        []string        `json:"task_ids"`
	Spec           json.RawMessage `json:"spec"`
	CreatedBy      string          `json:"created_by"`
	Now            time.Time       `json:"now"`
	MaxPendingJobs int             `json:"max_pending_jobs,omitempty"`
	SpecHash       string          `json:"spec_hash,omitempty"`
	Team           string          `json:"team,omitempty"`
}

// passes counts, by command type, the codec's passes over commands'
// contents, for the test that a write makes at most two: one encode on
// the leader, one decode on each replica (see Passes).
var passes [256]struct{ encodes, decodes atomic.Int64 }

// Passes returns how many times this process has encoded and decoded
// commands of type t: Encode, EncodeSubmit's one pass over the spec, and
// Decode. A framed batch counts none of its own; its entries count as
// each is decoded.
func Passes(t Type) (encodes, decodes int64) {
	return passes[t].encodes.Load(), passes[t].decodes.Load()
}
