package snapcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// randomTask is a task with each field set or left empty at random, and
// values at the edges of each encoding (string and int lengths, times
// before 1970 and past 2106, nanoseconds).
func randomTask(rng *rand.Rand) *record.Task {
	str := func() string {
		switch rng.IntN(5) {
		case 0:
			return ""
		case 1:
			return string(bytes.Repeat([]byte{'x'}, rng.IntN(300)))
		case 2:
			return string(bytes.Repeat([]byte{'y'}, 65536+rng.IntN(10)))
		default:
			return fmt.Sprintf("id-%d", rng.Int64())
		}
	}
	ints := []int64{0, 1, -1, 31, -32, -33, 127, 128, 255, 256, -128, -129, 32767, 32768, -32768, -32769, math.MaxInt32, math.MaxInt32 + 1, math.MinInt32, math.MinInt32 - 1, math.MaxInt64, math.MinInt64}
	num := func() int64 {
		if rng.IntN(2) == 0 {
			return ints[rng.IntN(len(ints))]
		}
		return rng.Int64() >> rng.IntN(64)
	}
	tm := func() time.Time {
		switch rng.IntN(5) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(rng.Int64N(1<<34), 0)
		case 2:
			return time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).In(time.FixedZone("x", 3600))
		case 3:
			return time.Unix(-rng.Int64N(1<<40), rng.Int64N(1e9))
		default:
			return time.Unix(1<<34+rng.Int64N(1<<40), rng.Int64N(1e9))
		}
	}
	strs := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, rng.IntN(20))
		for i := range out {
			out[i] = str()
		}
		return out
	}
	intp := func() *int {
		if rng.IntN(2) == 0 {
			return nil
		}
		v := int(num())
		return &v
	}
	t := &record.Task{
		ID: str(), JobID: str(), Index: int(num()), Seq: uint64(num()), State: str(), AttemptID: str(), WorkerID: str(),
		Devices: strs(), LeaseSeconds: int(num()), LeaseExpiresAt: tm(), ExitCode: intp(), Reason: str(),
		SubmittedBy: str(), ExecutedBy: str(), CancelRequested: rng.IntN(2) == 0, Preempt: str(),
		CreatedAt: tm(), UpdatedAt: tm(), LogBytes: int(num()), LastLogSeq: num(), LogCut: rng.IntN(2) == 0,
	}
	switch rng.IntN(3) {
	case 1:
		t.Output = json.RawMessage(`{"k":1}`)
	case 2:
		t.Output = json.RawMessage{}
	}
	if rng.IntN(3) == 0 {
		t.Artifacts = []command.TaskArtifact{{Path: str(), SHA256: str(), Size: num()}}
	}
	for range rng.IntN(4) {
		a := record.Attempt{ID: str(), Number: int(num()), WorkerID: str(), State: str(), Devices: strs(),
			AssignedAt: tm(), StartedAt: tm(), EndedAt: tm(), ExitCode: intp(), Reason: str()}
		if rng.IntN(3) == 0 {
			a.Rendezvous = &record.Endpoint{Address: str(), Port: int(num())}
		}
		if rng.IntN(4) == 0 {
			a.PreemptedBy = &record.Preemptor{JobID: str(), Team: str(), TaskID: str(), At: tm()}
		}
		t.Attempts = append(t.Attempts, a)
	}
	return t
}

// Task records, attempts included, are go-msgpack's bytes and read back
// as go-msgpack reads them (matchesTheCodec).
func TestTaskRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	matchesTheCodec(t, taskCodec, 3000, 600, func() *record.Task { return randomTask(rng) }, taskHasNested)
}

// Finish and string-table records too: the bytes go-msgpack writes.
func TestSmallRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var want []byte
	enc := codec.NewEncoderBytes(&want, Handle())
	str := func() string { return string(bytes.Repeat([]byte{'z'}, rng.IntN(300))) }
	for i := range 500 {
		f := Finish{Task: str(), Submission: str(), BodyHash: str()}
		p := Pair{Key: str(), Value: str()}
		for _, c := range []struct {
			v   any
			got []byte
		}{{f, appendFinish(nil, f)}, {p, appendPair(nil, p)}} {
			want = want[:0]
			enc.ResetBytes(&want)
			if err := enc.Encode(c.v); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.got, want) {
				t.Fatalf("record %d (%T): got %x, the codec writes %x", i, c.v, c.got, want)
			}
		}
	}
}

// randomJob is a job whose spec has each field set or left empty at
// random.
func randomJob(rng *rand.Rand) *record.Job {
	t := randomTask(rng) // strings, ints and times at their edges
	pick := func(s string) string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return s
	}
	n := func(v int) int {
		if rng.IntN(3) == 0 {
			return 0
		}
		return v
	}
	spec := command.JobSpec{
		Name: pick(t.ID), Executor: pick(t.JobID), Count: n(t.Index), Capability: pick(t.State),
		Spread: rng.IntN(2) == 0, Gang: rng.IntN(2) == 0, ExclusiveWorker: rng.IntN(2) == 0,
		MaxPerWorker: n(t.LeaseSeconds), Priority: n(int(t.Seq)), MaxAttempts: n(t.LogBytes),
		LeaseSeconds: n(-t.Index), TimeoutSeconds: n(t.LeaseSeconds / 3), Outputs: t.Devices,
		IdempotencyKey: pick(t.Reason),
	}
	if rng.IntN(2) == 0 {
		spec.Config = json.RawMessage(`{"command":"true"}`)
	}
	if rng.IntN(3) == 0 {
		spec.Affinity = json.RawMessage(`[{"key":"zone"}]`)
	}
	if rng.IntN(3) == 0 {
		spec.Resources = &command.Resources{GPUs: n(2), GPUMemoryMiB: uint64(n(40960)), GPUModel: pick("H100")}
	}
	if rng.IntN(3) == 0 {
		spec.Target = &command.Target{Kind: "group", ID: pick("g1")}
	}
	if rng.IntN(3) == 0 {
		spec.Inputs = []command.ArtifactRef{{SHA256: "ab", Path: pick("in/x")}}
	}
	var ids []string
	if rng.IntN(4) > 0 {
		ids = t.Devices
	}
	return &record.Job{ID: t.ID, Spec: spec, SpecHash: t.WorkerID, CreatedBy: t.SubmittedBy, CreatedAt: t.CreatedAt,
		UpdatedAt: t.UpdatedAt, TaskIDs: ids, Seq: t.Seq}
}

// Job records too, spec included.
func TestJobRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	matchesTheCodec(t, jobCodec, 3000, 600, func() *record.Job { return randomJob(rng) }, func(j *record.Job) bool {
		return j.Spec.Resources != nil || j.Spec.Target != nil || len(j.Spec.Inputs) > 0
	})
}
