package snapcodec

import (
	"math/rand/v2"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// randomWorker is a worker whose fields, devices included, are set or
// left empty at random, with randomTask's edge values.
func randomWorker(rng *rand.Rand) *record.Worker {
	t, u := randomTask(rng), randomTask(rng) // strings, ints, times at their edges
	pick := func(s string) string {
		if rng.IntN(3) == 0 {
			return ""
		}
		return s
	}
	w := &record.Worker{
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
		w.LastAcquire = &record.LastAcquire{RequestID: u.ID, TaskID: u.JobID, AttemptID: u.AttemptID}
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
func randomCredential(rng *rand.Rand) *creds.Credential {
	t, u := randomTask(rng), randomTask(rng)
	c := &creds.Credential{Revoked: t.LogCut, RevokedAt: t.LeaseExpiresAt, RevokedBy: u.State, Uses: t.Index, LastUsedAt: u.CreatedAt}
	c.ID, c.Kind, c.Name, c.Roles, c.Hash = t.ID, t.State, t.JobID, t.Devices, u.ID
	c.CreatedAt, c.ExpiresAt, c.WorkerID, c.CreatedBy, c.MaxUses = t.CreatedAt, t.UpdatedAt, t.WorkerID, t.SubmittedBy, u.Index
	c.RequiresApproval, c.Groups, c.GPUModels, c.InstanceID = t.CancelRequested, u.Devices, t.Devices, u.Reason
	if rng.IntN(4) == 0 {
		c.Labels = map[string]string{"team": u.JobID}
	}
	return c
}

// Worker records, GPUs included, and credential records are go-msgpack's
// bytes and read back as go-msgpack reads them (matchesTheCodec).
func TestWorkerRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	matchesTheCodec(t, workerCodec, 2000, 400, func() *record.Worker { return randomWorker(rng) }, func(w *record.Worker) bool {
		nested := w.LastAcquire != nil
		for _, d := range w.Devices {
			nested = nested || len(d.Links) > 0
		}
		return nested
	})
	matchesTheCodec(t, credentialCodec, 2000, 400, func() *creds.Credential { return randomCredential(rng) },
		func(c *creds.Credential) bool { return len(c.Labels) > 0 })
}

// Audit records too; none nests a value.
func TestAuditRecordBytesMatchTheCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	matchesTheCodec(t, auditCodec, 2000, 2000, func() *command.AuditEvent {
		x, y := randomTask(rng), randomTask(rng)
		return &command.AuditEvent{Seq: x.Seq, Time: x.CreatedAt, Kind: x.State, Actor: x.JobID, CredentialID: x.WorkerID,
			CredentialKind: x.AttemptID, WorkerID: x.SubmittedBy, Subject: x.ExecutedBy, Source: x.Reason, Route: x.Preempt,
			Code: y.ID, Detail: y.State, Count: x.Index}
	}, func(*command.AuditEvent) bool { return false })
}
