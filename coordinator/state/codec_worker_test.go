package state

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// randomWorker is a worker whose fields, devices included, are set or
// left empty at random, with randomTask's edge values.
func randomWorker(rng *rand.Rand) *Worker {
	t, u := randomTask(rng), randomTask(rng) // strings, ints, times at their edges
	pick := func(s string) string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return s
	}
	w := &Worker{
		ID: t.ID, Status: t.State, Capabilities: t.Devices, Executors: u.Devices, CredentialID: t.JobID,
		RegisteredAt: t.CreatedAt, RegisteredBy: pick(t.WorkerID), Origin: pick(t.SubmittedBy), InstanceID: pick(t.ExecutedBy),
		ClusterKey: pick(t.Reason), ExternalWorkerKey: pick(t.Preempt), TokenID: pick(u.ID), ApprovedBy: pick(u.JobID),
		ApprovedAt: t.UpdatedAt, DrainedBy: pick(u.State), DrainDeadline: t.LeaseExpiresAt, Deregister: t.LogCut,
		ClearGPUs: u.Devices, MaxTasks: t.Index,
	}
	if rng.IntN(3) == 0 {
		w.Labels = map[string]string{}
		for k, v := range map[string]string{"zone": pick(u.Reason), t.JobID: "x", u.WorkerID: t.State} {
			w.Labels[k] = v
		}
	}
	if rng.IntN(3) > 0 {
		w.ApprovedDevices = map[string]uint64{}
		for _, d := range u.Devices {
			w.ApprovedDevices[d] = u.Seq + uint64(len(d))
		}
	}
	if rng.IntN(4) == 0 {
		w.LastAcquire = &LastAcquire{RequestID: u.ID, TaskID: u.JobID, AttemptID: u.AttemptID}
	}
	switch rng.IntN(4) {
	case 0: // nil
	case 1:
		w.Devices = []command.Device{}
	default:
		for range rng.IntN(9) {
			x := randomTask(rng)
			d := command.Device{
				Index: x.Index, UUID: x.ID, Name: x.State, MemoryMiB: x.Seq, DriverVersion: pick(x.JobID),
				CUDAVersion: pick(x.WorkerID), ComputeCapability: pick(x.AttemptID), PCIDevice: pick(x.Reason),
				Healthy: x.LogCut, Health: pick(x.SubmittedBy), HealthReason: pick(x.ExecutedBy),
				PendingApproval: x.CancelRequested, MIGEnabled: rng.IntN(2) == 0, Parent: pick(x.Preempt),
				MIGProfile: pick(x.Preempt), Sharing: pick(x.State), NUMANode: x.ExitCode,
			}
			if rng.IntN(5) == 0 {
				d.Links = []command.DeviceLink{{Peer: x.ID, Path: "NV18", NvLinks: x.Index}}
			}
			w.Devices = append(w.Devices, d)
		}
	}
	return w
}

// randomCredential is a credential whose fields are set or left empty at
// random.
func randomCredential(rng *rand.Rand) *Credential {
	t, u := randomTask(rng), randomTask(rng)
	c := &Credential{Revoked: t.LogCut, RevokedAt: t.LeaseExpiresAt, RevokedBy: u.State, Uses: t.Index, LastUsedAt: u.CreatedAt}
	c.ID, c.Kind, c.Name, c.Roles, c.Hash = t.ID, t.State, t.JobID, t.Devices, u.ID
	c.CreatedAt, c.ExpiresAt, c.WorkerID, c.CreatedBy, c.MaxUses = t.CreatedAt, t.UpdatedAt, t.WorkerID, t.SubmittedBy, u.Index
	c.RequiresApproval, c.Groups, c.GPUModels, c.InstanceID = t.CancelRequested, u.Devices, t.Devices, u.Reason
	if rng.IntN(4) == 0 {
		c.Labels = map[string]string{"team": u.JobID}
	}
	return c
}

// Worker and credential records are written as go-msgpack writes them,
// and read back as go-msgpack reads them; the reader leaves to go-msgpack
// only the records carrying a value the writer nests.
func TestWorkerRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	var want []byte
	enc := codec.NewEncoderBytes(&want, msgpackHandle())
	rw := newRecordWriter()
	encode := func(v any) []byte {
		want = want[:0]
		enc.ResetBytes(&want)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return want
	}
	read := 0
	for i := range 2000 {
		w := randomWorker(rng)
		got, err := rw.appendWorker(nil, w)
		if err != nil {
			t.Fatal(err)
		}
		if want := encode(w); !bytes.Equal(got, want) {
			t.Fatalf("worker %d: %d bytes, the codec writes %d:\n got %x\nwant %x\nworker %+v", i, len(got), len(want), got[:min(len(got), 300)], want[:min(len(want), 300)], w)
		}
		dec, ok := codecDecode[Worker](t, got)
		if !ok {
			t.Fatalf("worker %d: go-msgpack cannot read the writer's bytes", i)
		}
		back, ok := newRecordReader().worker(got)
		nested := w.LastAcquire != nil
		for _, d := range w.Devices {
			nested = nested || len(d.Links) > 0
		}
		switch {
		case !ok && !nested:
			t.Fatalf("worker %d: the reader left a plain worker to go-msgpack: %+v", i, w)
		case ok && !reflect.DeepEqual(back, dec):
			t.Fatalf("worker %d:\n got %+v\nwant %+v", i, back, dec)
		case ok:
			read++
		}

		c := randomCredential(rng)
		got, err = rw.appendCredential(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := encode(c); !bytes.Equal(got, want) {
			t.Fatalf("credential %d: %d bytes, the codec writes %d:\n got %x\nwant %x\ncredential %+v", i, len(got), len(want), got[:min(len(got), 300)], want[:min(len(want), 300)], c)
		}
		cdec, ok := codecDecode[Credential](t, got)
		if !ok {
			t.Fatalf("credential %d: go-msgpack cannot read the writer's bytes", i)
		}
		cback, ok := newRecordReader().credential(got)
		switch {
		case !ok && len(c.Labels) == 0:
			t.Fatalf("credential %d: the reader left a plain credential to go-msgpack: %+v", i, c)
		case ok && !reflect.DeepEqual(cback, cdec):
			t.Fatalf("credential %d:\n got %+v\nwant %+v", i, cback, cdec)
		case ok:
			read++
		}
	}
	if read < 1500 {
		t.Fatalf("the reader read only %d of 4000 records", read)
	}
}

// Audit records too: go-msgpack's bytes, read back as go-msgpack reads
// them.
func TestAuditRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	var want []byte
	enc := codec.NewEncoderBytes(&want, msgpackHandle())
	rw := newRecordWriter()
	for i := range 2000 {
		x, y := randomTask(rng), randomTask(rng)
		ev := command.AuditEvent{Seq: x.Seq, Time: x.CreatedAt, Kind: x.State, Actor: x.JobID, CredentialID: x.WorkerID,
			CredentialKind: x.AttemptID, WorkerID: x.SubmittedBy, Subject: x.ExecutedBy, Source: x.Reason, Route: x.Preempt,
			Code: y.ID, Detail: y.State, Count: x.Index}
		got := rw.appendAudit(nil, &ev)
		want = want[:0]
		enc.ResetBytes(&want)
		if err := enc.Encode(&ev); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d: got %x, the codec writes %x", i, got[:min(len(got), 200)], want[:min(len(want), 200)])
		}
		dec, ok := codecDecode[command.AuditEvent](t, got)
		back, rok := newRecordReader().audit(got)
		if !ok || !rok || !reflect.DeepEqual(back, *dec) {
			t.Fatalf("event %d: reader %+v (%v), go-msgpack %+v (%v)", i, back, rok, dec, ok)
		}
	}
}
