package snapcodec

import (
	"encoding/json"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The records of the large tables, each declared once (mprecord):
// tasks with their attempts, jobs with their specs, workers with their
// GPUs, credentials and audit events. Field names are the JSON names;
// TestTaskRecordBytesMatchTheCodec and its neighbours hold each codec to
// the bytes go-msgpack writes for the same record.

var taskCodec = mprecord.New(
	mprecord.Nested("artifacts", func(t *record.Task) (any, bool) { return t.Artifacts, len(t.Artifacts) > 0 }),
	mprecord.Str("attempt_id", func(t *record.Task) *string { return &t.AttemptID }, mprecord.OmitEmpty),
	mprecord.List("attempts", func(t *record.Task) *[]record.Attempt { return &t.Attempts }, attemptCodec, mprecord.OmitEmpty),
	mprecord.Bool("cancel_requested", func(t *record.Task) *bool { return &t.CancelRequested }, mprecord.OmitEmpty),
	mprecord.Nested("checkpoint", func(t *record.Task) (any, bool) { return t.Checkpoint, t.Checkpoint != nil }),
	mprecord.Time("created_at", func(t *record.Task) *time.Time { return &t.CreatedAt }),
	mprecord.Strings("devices", func(t *record.Task) *[]string { return &t.Devices }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("executed_by", func(t *record.Task) *string { return &t.ExecutedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.IntPtr("exit_code", func(t *record.Task) **int { return &t.ExitCode }),
	mprecord.Str("id", func(t *record.Task) *string { return &t.ID }, mprecord.Always),
	mprecord.Int("index", func(t *record.Task) *int { return &t.Index }, mprecord.Always),
	mprecord.Str("job_id", func(t *record.Task) *string { return &t.JobID }, mprecord.Always),
	mprecord.Int("last_log_seq", func(t *record.Task) *int64 { return &t.LastLogSeq }, mprecord.Always),
	mprecord.Time("lease_expires_at", func(t *record.Task) *time.Time { return &t.LeaseExpiresAt }),
	mprecord.Int("lease_seconds", func(t *record.Task) *int { return &t.LeaseSeconds }, mprecord.Always),
	mprecord.Int("log_bytes", func(t *record.Task) *int { return &t.LogBytes }, mprecord.OmitEmpty),
	mprecord.Bool("log_cut", func(t *record.Task) *bool { return &t.LogCut }, mprecord.OmitEmpty),
	mprecord.Raw("output", func(t *record.Task) *json.RawMessage { return &t.Output }, false),
	mprecord.Str("preempt", func(t *record.Task) *string { return &t.Preempt }, mprecord.OmitEmpty),
	mprecord.Str("reason", func(t *record.Task) *string { return &t.Reason }, mprecord.OmitEmpty),
	mprecord.Uint("seq", func(t *record.Task) *uint64 { return &t.Seq }, mprecord.Always),
	mprecord.Str("state", func(t *record.Task) *string { return &t.State }, mprecord.Interned),
	mprecord.Str("submitted_by", func(t *record.Task) *string { return &t.SubmittedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("updated_at", func(t *record.Task) *time.Time { return &t.UpdatedAt }),
	mprecord.Str("worker_id", func(t *record.Task) *string { return &t.WorkerID }, mprecord.OmitEmpty|mprecord.Interned),
)

var attemptCodec = mprecord.New(
	mprecord.Time("assigned_at", func(a *record.Attempt) *time.Time { return &a.AssignedAt }),
	mprecord.Strings("devices", func(a *record.Attempt) *[]string { return &a.Devices }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("ended_at", func(a *record.Attempt) *time.Time { return &a.EndedAt }),
	mprecord.Str("gpu_fault", func(a *record.Attempt) *string { return &a.GPUFault }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.IntPtr("exit_code", func(a *record.Attempt) **int { return &a.ExitCode }),
	mprecord.Str("id", func(a *record.Attempt) *string { return &a.ID }, mprecord.Always),
	mprecord.Nested("meter", func(a *record.Attempt) (any, bool) { return a.Meter, len(a.Meter) > 0 }),
	mprecord.Int("number", func(a *record.Attempt) *int { return &a.Number }, mprecord.Always),
	mprecord.Nested("preempted_by", func(a *record.Attempt) (any, bool) { return a.PreemptedBy, a.PreemptedBy != nil }),
	mprecord.Nested("preflight", func(a *record.Attempt) (any, bool) { return a.Preflight, a.Preflight != nil }),
	mprecord.Str("reason", func(a *record.Attempt) *string { return &a.Reason }, mprecord.OmitEmpty),
	mprecord.Nested("rendezvous", func(a *record.Attempt) (any, bool) { return a.Rendezvous, a.Rendezvous != nil }),
	mprecord.Time("started_at", func(a *record.Attempt) *time.Time { return &a.StartedAt }),
	mprecord.Str("state", func(a *record.Attempt) *string { return &a.State }, mprecord.Interned),
	mprecord.Str("worker_id", func(a *record.Attempt) *string { return &a.WorkerID }, mprecord.Interned),
)

var jobCodec = mprecord.New(
	mprecord.Time("created_at", func(j *record.Job) *time.Time { return &j.CreatedAt }),
	mprecord.Str("created_by", func(j *record.Job) *string { return &j.CreatedBy }, mprecord.Interned),
	mprecord.Str("id", func(j *record.Job) *string { return &j.ID }, mprecord.Always),
	mprecord.Uint("seq", func(j *record.Job) *uint64 { return &j.Seq }, mprecord.Always),
	mprecord.Struct("spec", func(j *record.Job) *command.JobSpec { return &j.Spec }, specCodec),
	mprecord.Str("spec_hash", func(j *record.Job) *string { return &j.SpecHash }, mprecord.Interned),
	mprecord.Strings("task_ids", func(j *record.Job) *[]string { return &j.TaskIDs }, mprecord.Always),
	mprecord.Str("team", func(j *record.Job) *string { return &j.Team }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("updated_at", func(j *record.Job) *time.Time { return &j.UpdatedAt }),
)

type spec = command.JobSpec

var specCodec = mprecord.New(
	mprecord.Raw("affinity", func(s *spec) *json.RawMessage { return &s.Affinity }, false),
	mprecord.Str("capability", func(s *spec) *string { return &s.Capability }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Nested("checkpoint", func(s *spec) (any, bool) { return s.Checkpoint, s.Checkpoint != nil }),
	mprecord.Raw("config", func(s *spec) *json.RawMessage { return &s.Config }, true),
	mprecord.Int("count", func(s *spec) *int { return &s.Count }, mprecord.OmitEmpty),
	mprecord.List("depends_on", func(s *spec) *[]command.Dependency { return &s.DependsOn }, dependencyCodec, mprecord.OmitEmpty),
	mprecord.Bool("exclusive_worker", func(s *spec) *bool { return &s.ExclusiveWorker }, mprecord.OmitEmpty),
	mprecord.Str("executor", func(s *spec) *string { return &s.Executor }, mprecord.Interned),
	mprecord.Bool("gang", func(s *spec) *bool { return &s.Gang }, mprecord.OmitEmpty),
	mprecord.Bool("preflight", func(s *spec) *bool { return &s.Preflight }, mprecord.OmitEmpty),
	mprecord.Str("idempotency_key", func(s *spec) *string { return &s.IdempotencyKey }, mprecord.OmitEmpty), // one a job
	mprecord.Nested("inputs", func(s *spec) (any, bool) { return s.Inputs, len(s.Inputs) > 0 }),
	mprecord.Int("lease_seconds", func(s *spec) *int { return &s.LeaseSeconds }, mprecord.OmitEmpty),
	mprecord.Int("max_attempts", func(s *spec) *int { return &s.MaxAttempts }, mprecord.OmitEmpty),
	mprecord.Int("max_per_worker", func(s *spec) *int { return &s.MaxPerWorker }, mprecord.OmitEmpty),
	mprecord.Str("name", func(s *spec) *string { return &s.Name }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Strings("outputs", func(s *spec) *[]string { return &s.Outputs }, mprecord.OmitEmpty),
	mprecord.Int("parallelism", func(s *spec) *int { return &s.Parallelism }, mprecord.OmitEmpty),
	mprecord.BoolPtr("preemptible", func(s *spec) **bool { return &s.Preemptible }),
	mprecord.IntPtr("preemption_grace_seconds", func(s *spec) **int { return &s.PreemptionGraceSeconds }),
	mprecord.Int("priority", func(s *spec) *int { return &s.Priority }, mprecord.OmitEmpty),
	mprecord.Nested("resources", func(s *spec) (any, bool) { return s.Resources, s.Resources != nil }),
	mprecord.Bool("spread", func(s *spec) *bool { return &s.Spread }, mprecord.OmitEmpty),
	mprecord.Nested("target", func(s *spec) (any, bool) { return s.Target, s.Target != nil }),
	mprecord.Int("timeout_seconds", func(s *spec) *int { return &s.TimeoutSeconds }, mprecord.OmitEmpty),
)

var dependencyCodec = mprecord.New(
	mprecord.Str("condition", func(d *command.Dependency) *string { return &d.Condition }, mprecord.Interned),
	mprecord.Str("job", func(d *command.Dependency) *string { return &d.Job }, mprecord.Always),
)

var workerCodec = mprecord.New(
	mprecord.Time("approved_at", func(w *record.Worker) *time.Time { return &w.ApprovedAt }),
	mprecord.Str("approved_by", func(w *record.Worker) *string { return &w.ApprovedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Map("approved_devices", func(w *record.Worker) *map[string]uint64 { return &w.ApprovedDevices }, mprecord.Always, mprecord.AppendUint,
		func(_ *mprecord.Reader, r *mprecord.Input) uint64 { return r.Uint() }),
	mprecord.Map("approved_identity", func(w *record.Worker) *map[string]string { return &w.ApprovedIdentity }, mprecord.Always, mprecord.AppendString,
		func(d *mprecord.Reader, r *mprecord.Input) string { return d.Str(r) }),
	mprecord.Strings("capabilities", func(w *record.Worker) *[]string { return &w.Capabilities }, mprecord.Interned),
	mprecord.Strings("clear_gpus", func(w *record.Worker) *[]string { return &w.ClearGPUs }, mprecord.OmitEmpty),
	mprecord.Str("cluster_key", func(w *record.Worker) *string { return &w.ClusterKey }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Map("cordons", func(w *record.Worker) *map[string]string { return &w.Cordons }, mprecord.OmitEmpty, mprecord.AppendString,
		func(d *mprecord.Reader, r *mprecord.Input) string { return d.Str(r) }),
	mprecord.Str("credential_id", func(w *record.Worker) *string { return &w.CredentialID }, mprecord.Always),
	mprecord.Bool("deregister", func(w *record.Worker) *bool { return &w.Deregister }, mprecord.OmitEmpty),
	mprecord.List("devices", func(w *record.Worker) *[]command.Device { return &w.Devices }, deviceCodec, mprecord.Always),
	mprecord.Time("drain_deadline", func(w *record.Worker) *time.Time { return &w.DrainDeadline }),
	mprecord.Str("drained_by", func(w *record.Worker) *string { return &w.DrainedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Strings("executors", func(w *record.Worker) *[]string { return &w.Executors }, mprecord.Interned),
	mprecord.Str("external_worker_key", func(w *record.Worker) *string { return &w.ExternalWorkerKey }, mprecord.OmitEmpty),
	mprecord.Nested("holds", func(w *record.Worker) (any, bool) { return w.Holds, len(w.Holds) > 0 }),
	mprecord.Str("id", func(w *record.Worker) *string { return &w.ID }, mprecord.Interned), // tasks name it
	mprecord.Str("instance_id", func(w *record.Worker) *string { return &w.InstanceID }, mprecord.OmitEmpty),
	mprecord.Map("labels", func(w *record.Worker) *map[string]string { return &w.Labels }, mprecord.OmitEmpty, mprecord.AppendString,
		func(d *mprecord.Reader, r *mprecord.Input) string { return d.Str(r) }),
	mprecord.Nested("last_acquire", func(w *record.Worker) (any, bool) { return w.LastAcquire, w.LastAcquire != nil }),
	mprecord.Int("max_tasks", func(w *record.Worker) *int { return &w.MaxTasks }, mprecord.OmitEmpty),
	mprecord.List("mig_layouts", func(w *record.Worker) *[]record.MIGLayout { return &w.MIGLayouts }, migLayoutCodec, mprecord.OmitEmpty),
	mprecord.Str("origin", func(w *record.Worker) *string { return &w.Origin }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("registered_at", func(w *record.Worker) *time.Time { return &w.RegisteredAt }),
	mprecord.Str("registered_by", func(w *record.Worker) *string { return &w.RegisteredBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("status", func(w *record.Worker) *string { return &w.Status }, mprecord.Interned),
	mprecord.Str("token_id", func(w *record.Worker) *string { return &w.TokenID }, mprecord.OmitEmpty|mprecord.Interned),
)

var deviceCodec = mprecord.New(
	mprecord.Str("compute_capability", func(d *command.Device) *string { return &d.ComputeCapability }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("cuda_version", func(d *command.Device) *string { return &d.CUDAVersion }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("driver_version", func(d *command.Device) *string { return &d.DriverVersion }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("health", func(d *command.Device) *string { return &d.Health }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("health_reason", func(d *command.Device) *string { return &d.HealthReason }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Bool("healthy", func(d *command.Device) *bool { return &d.Healthy }, mprecord.Always),
	mprecord.Int("index", func(d *command.Device) *int { return &d.Index }, mprecord.Always),
	mprecord.Bool("cordoned", func(d *command.Device) *bool { return &d.Cordoned }, mprecord.OmitEmpty),
	mprecord.Str("cordon_reason", func(d *command.Device) *string { return &d.CordonReason }, mprecord.OmitEmpty),
	mprecord.Nested("links", func(d *command.Device) (any, bool) { return d.Links, len(d.Links) > 0 }),
	mprecord.Uint("memory_mib", func(d *command.Device) *uint64 { return &d.MemoryMiB }, mprecord.Always),
	mprecord.Bool("mig_enabled", func(d *command.Device) *bool { return &d.MIGEnabled }, mprecord.OmitEmpty),
	mprecord.Str("mig_error", func(d *command.Device) *string { return &d.MIGError }, mprecord.OmitEmpty),
	mprecord.Str("mig_profile", func(d *command.Device) *string { return &d.MIGProfile }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Uint("mig_request", func(d *command.Device) *uint64 { return &d.MIGRequest }, mprecord.OmitEmpty),
	mprecord.Str("name", func(d *command.Device) *string { return &d.Name }, mprecord.Interned),
	mprecord.IntPtr("numa_node", func(d *command.Device) **int { return &d.NUMANode }),
	mprecord.Str("parent", func(d *command.Device) *string { return &d.Parent }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("pci_device", func(d *command.Device) *string { return &d.PCIDevice }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Bool("pending_approval", func(d *command.Device) *bool { return &d.PendingApproval }, mprecord.OmitEmpty),
	mprecord.Str("sharing", func(d *command.Device) *string { return &d.Sharing }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("uuid", func(d *command.Device) *string { return &d.UUID }, mprecord.Interned), // tasks name it
)

// A credential's record is the stored record's fields and the
// credential's own, in one map.
var credentialCodec = mprecord.New(
	mprecord.Time("created_at", func(c *creds.Credential) *time.Time { return &c.CreatedAt }),
	mprecord.Str("created_by", func(c *creds.Credential) *string { return &c.CreatedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("expires_at", func(c *creds.Credential) *time.Time { return &c.ExpiresAt }),
	mprecord.Strings("gpu_models", func(c *creds.Credential) *[]string { return &c.GPUModels }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Strings("groups", func(c *creds.Credential) *[]string { return &c.Groups }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("hash", func(c *creds.Credential) *string { return &c.Hash }, mprecord.Always),
	mprecord.Str("id", func(c *creds.Credential) *string { return &c.ID }, mprecord.Always),
	mprecord.Str("instance_id", func(c *creds.Credential) *string { return &c.InstanceID }, mprecord.OmitEmpty),
	mprecord.Str("kind", func(c *creds.Credential) *string { return &c.Kind }, mprecord.Interned),
	mprecord.Nested("labels", func(c *creds.Credential) (any, bool) { return c.Labels, len(c.Labels) > 0 }),
	mprecord.Time("last_used_at", func(c *creds.Credential) *time.Time { return &c.LastUsedAt }),
	mprecord.Int("max_uses", func(c *creds.Credential) *int { return &c.MaxUses }, mprecord.OmitEmpty),
	mprecord.Str("name", func(c *creds.Credential) *string { return &c.Name }, mprecord.Always),
	mprecord.Bool("requires_approval", func(c *creds.Credential) *bool { return &c.RequiresApproval }, mprecord.OmitEmpty),
	mprecord.Bool("revoked", func(c *creds.Credential) *bool { return &c.Revoked }, mprecord.OmitEmpty),
	mprecord.Time("revoked_at", func(c *creds.Credential) *time.Time { return &c.RevokedAt }),
	mprecord.Str("revoked_by", func(c *creds.Credential) *string { return &c.RevokedBy }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Strings("roles", func(c *creds.Credential) *[]string { return &c.Roles }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("team", func(c *creds.Credential) *string { return &c.Team }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Int("uses", func(c *creds.Credential) *int { return &c.Uses }, mprecord.OmitEmpty),
	mprecord.Str("worker_id", func(c *creds.Credential) *string { return &c.WorkerID }, mprecord.OmitEmpty),
)

type auditEvent = command.AuditEvent

var auditCodec = mprecord.New(
	mprecord.Str("actor", func(e *auditEvent) *string { return &e.Actor }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("code", func(e *auditEvent) *string { return &e.Code }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Int("count", func(e *auditEvent) *int { return &e.Count }, mprecord.OmitEmpty),
	mprecord.Str("credential_id", func(e *auditEvent) *string { return &e.CredentialID }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("credential_kind", func(e *auditEvent) *string { return &e.CredentialKind }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("detail", func(e *auditEvent) *string { return &e.Detail }, mprecord.OmitEmpty),
	mprecord.Str("kind", func(e *auditEvent) *string { return &e.Kind }, mprecord.Interned),
	mprecord.Str("route", func(e *auditEvent) *string { return &e.Route }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Uint("seq", func(e *auditEvent) *uint64 { return &e.Seq }, mprecord.OmitEmpty),
	mprecord.Str("source", func(e *auditEvent) *string { return &e.Source }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("subject", func(e *auditEvent) *string { return &e.Subject }, mprecord.OmitEmpty),
	mprecord.Str("team", func(e *auditEvent) *string { return &e.Team }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Time("time", func(e *auditEvent) *time.Time { return &e.Time }),
	mprecord.Str("worker_id", func(e *auditEvent) *string { return &e.WorkerID }, mprecord.OmitEmpty|mprecord.Interned),
)

// task reads a task record; the attempt whose id is the task's current
// attempt id shares that string.
func (d *recordReader) task(body []byte) (*record.Task, bool) {
	t, ok := taskCodec.Decode(d.Reader, body)
	for i := range t.Attempts {
		if a := &t.Attempts[i]; a.ID == t.AttemptID {
			a.ID = t.AttemptID
		}
	}
	return t, ok
}

func (d *recordReader) audit(body []byte) (command.AuditEvent, bool) {
	ev, ok := auditCodec.Decode(d.Reader, body)
	return *ev, ok
}

var migLayoutCodec = mprecord.New(
	mprecord.Time("at", func(m *record.MIGLayout) *time.Time { return &m.At }),
	mprecord.Bool("auto", func(m *record.MIGLayout) *bool { return &m.Auto }, mprecord.OmitEmpty),
	mprecord.Str("by", func(m *record.MIGLayout) *string { return &m.By }, mprecord.Interned),
	mprecord.Uint("generation", func(m *record.MIGLayout) *uint64 { return &m.Generation }, mprecord.Always),
	mprecord.Strings("layout", func(m *record.MIGLayout) *[]string { return &m.Layout }, mprecord.OmitEmpty|mprecord.Interned),
	mprecord.Str("reason", func(m *record.MIGLayout) *string { return &m.Reason }, mprecord.OmitEmpty),
	mprecord.Time("settled_at", func(m *record.MIGLayout) *time.Time { return &m.SettledAt }),
	mprecord.Str("state", func(m *record.MIGLayout) *string { return &m.State }, mprecord.Interned),
	mprecord.Str("uuid", func(m *record.MIGLayout) *string { return &m.UUID }, mprecord.Interned),
)
