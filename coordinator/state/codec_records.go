package state

import (
	"encoding/json"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The records of the large tables, each declared once (codec_fields.go):
// tasks with their attempts, jobs with their specs, workers with their
// GPUs, credentials and audit events. Field names are the JSON names;
// TestTaskRecordBytesMatchTheCodec and its neighbours hold each codec to
// the bytes go-msgpack writes for the same record.

var taskCodec = newCodec(
	nestedField("artifacts", func(t *Task) (any, bool) { return t.Artifacts, len(t.Artifacts) > 0 }),
	strField("attempt_id", func(t *Task) *string { return &t.AttemptID }, omitEmpty),
	listField("attempts", func(t *Task) *[]Attempt { return &t.Attempts }, attemptCodec, omitEmpty),
	boolField("cancel_requested", func(t *Task) *bool { return &t.CancelRequested }, omitEmpty),
	nestedField("checkpoint", func(t *Task) (any, bool) { return t.Checkpoint, t.Checkpoint != nil }),
	timeField("created_at", func(t *Task) *time.Time { return &t.CreatedAt }),
	stringsField("devices", func(t *Task) *[]string { return &t.Devices }, omitEmpty|interned),
	strField("executed_by", func(t *Task) *string { return &t.ExecutedBy }, omitEmpty|interned),
	intPtrField("exit_code", func(t *Task) **int { return &t.ExitCode }),
	strField("id", func(t *Task) *string { return &t.ID }, always),
	intField("index", func(t *Task) *int { return &t.Index }, always),
	strField("job_id", func(t *Task) *string { return &t.JobID }, always),
	intField("last_log_seq", func(t *Task) *int64 { return &t.LastLogSeq }, always),
	timeField("lease_expires_at", func(t *Task) *time.Time { return &t.LeaseExpiresAt }),
	intField("lease_seconds", func(t *Task) *int { return &t.LeaseSeconds }, always),
	intField("log_bytes", func(t *Task) *int { return &t.LogBytes }, omitEmpty),
	boolField("log_cut", func(t *Task) *bool { return &t.LogCut }, omitEmpty),
	rawField("output", func(t *Task) *json.RawMessage { return &t.Output }, false),
	strField("preempt", func(t *Task) *string { return &t.Preempt }, omitEmpty),
	strField("reason", func(t *Task) *string { return &t.Reason }, omitEmpty),
	uintField("seq", func(t *Task) *uint64 { return &t.Seq }, always),
	strField("state", func(t *Task) *string { return &t.State }, interned),
	strField("submitted_by", func(t *Task) *string { return &t.SubmittedBy }, omitEmpty|interned),
	timeField("updated_at", func(t *Task) *time.Time { return &t.UpdatedAt }),
	strField("worker_id", func(t *Task) *string { return &t.WorkerID }, omitEmpty|interned),
)

var attemptCodec = newCodec(
	timeField("assigned_at", func(a *Attempt) *time.Time { return &a.AssignedAt }),
	stringsField("devices", func(a *Attempt) *[]string { return &a.Devices }, omitEmpty|interned),
	timeField("ended_at", func(a *Attempt) *time.Time { return &a.EndedAt }),
	strField("gpu_fault", func(a *Attempt) *string { return &a.GPUFault }, omitEmpty|interned),
	intPtrField("exit_code", func(a *Attempt) **int { return &a.ExitCode }),
	strField("id", func(a *Attempt) *string { return &a.ID }, always),
	nestedField("meter", func(a *Attempt) (any, bool) { return a.Meter, len(a.Meter) > 0 }),
	intField("number", func(a *Attempt) *int { return &a.Number }, always),
	nestedField("preempted_by", func(a *Attempt) (any, bool) { return a.PreemptedBy, a.PreemptedBy != nil }),
	nestedField("preflight", func(a *Attempt) (any, bool) { return a.Preflight, a.Preflight != nil }),
	strField("reason", func(a *Attempt) *string { return &a.Reason }, omitEmpty),
	nestedField("rendezvous", func(a *Attempt) (any, bool) { return a.Rendezvous, a.Rendezvous != nil }),
	timeField("started_at", func(a *Attempt) *time.Time { return &a.StartedAt }),
	strField("state", func(a *Attempt) *string { return &a.State }, interned),
	strField("worker_id", func(a *Attempt) *string { return &a.WorkerID }, interned),
)

var jobCodec = newCodec(
	timeField("created_at", func(j *Job) *time.Time { return &j.CreatedAt }),
	strField("created_by", func(j *Job) *string { return &j.CreatedBy }, interned),
	strField("id", func(j *Job) *string { return &j.ID }, always),
	uintField("seq", func(j *Job) *uint64 { return &j.Seq }, always),
	structField("spec", func(j *Job) *command.JobSpec { return &j.Spec }, specCodec),
	strField("spec_hash", func(j *Job) *string { return &j.SpecHash }, interned),
	stringsField("task_ids", func(j *Job) *[]string { return &j.TaskIDs }, always),
	strField("team", func(j *Job) *string { return &j.Team }, omitEmpty|interned),
	timeField("updated_at", func(j *Job) *time.Time { return &j.UpdatedAt }),
)

type spec = command.JobSpec

var specCodec = newCodec(
	rawField("affinity", func(s *spec) *json.RawMessage { return &s.Affinity }, false),
	strField("capability", func(s *spec) *string { return &s.Capability }, omitEmpty|interned),
	nestedField("checkpoint", func(s *spec) (any, bool) { return s.Checkpoint, s.Checkpoint != nil }),
	rawField("config", func(s *spec) *json.RawMessage { return &s.Config }, true),
	intField("count", func(s *spec) *int { return &s.Count }, omitEmpty),
	listField("depends_on", func(s *spec) *[]command.Dependency { return &s.DependsOn }, dependencyCodec, omitEmpty),
	boolField("exclusive_worker", func(s *spec) *bool { return &s.ExclusiveWorker }, omitEmpty),
	strField("executor", func(s *spec) *string { return &s.Executor }, interned),
	boolField("gang", func(s *spec) *bool { return &s.Gang }, omitEmpty),
	boolField("preflight", func(s *spec) *bool { return &s.Preflight }, omitEmpty),
	strField("idempotency_key", func(s *spec) *string { return &s.IdempotencyKey }, omitEmpty), // one a job
	nestedField("inputs", func(s *spec) (any, bool) { return s.Inputs, len(s.Inputs) > 0 }),
	intField("lease_seconds", func(s *spec) *int { return &s.LeaseSeconds }, omitEmpty),
	intField("max_attempts", func(s *spec) *int { return &s.MaxAttempts }, omitEmpty),
	intField("max_per_worker", func(s *spec) *int { return &s.MaxPerWorker }, omitEmpty),
	strField("name", func(s *spec) *string { return &s.Name }, omitEmpty|interned),
	stringsField("outputs", func(s *spec) *[]string { return &s.Outputs }, omitEmpty),
	intField("parallelism", func(s *spec) *int { return &s.Parallelism }, omitEmpty),
	boolPtrField("preemptible", func(s *spec) **bool { return &s.Preemptible }),
	intPtrField("preemption_grace_seconds", func(s *spec) **int { return &s.PreemptionGraceSeconds }),
	intField("priority", func(s *spec) *int { return &s.Priority }, omitEmpty),
	nestedField("resources", func(s *spec) (any, bool) { return s.Resources, s.Resources != nil }),
	boolField("spread", func(s *spec) *bool { return &s.Spread }, omitEmpty),
	nestedField("target", func(s *spec) (any, bool) { return s.Target, s.Target != nil }),
	intField("timeout_seconds", func(s *spec) *int { return &s.TimeoutSeconds }, omitEmpty),
)

var dependencyCodec = newCodec(
	strField("condition", func(d *command.Dependency) *string { return &d.Condition }, interned),
	strField("job", func(d *command.Dependency) *string { return &d.Job }, always),
)

var workerCodec = newCodec(
	timeField("approved_at", func(w *Worker) *time.Time { return &w.ApprovedAt }),
	strField("approved_by", func(w *Worker) *string { return &w.ApprovedBy }, omitEmpty|interned),
	mapField("approved_devices", func(w *Worker) *map[string]uint64 { return &w.ApprovedDevices }, always, mpUint,
		func(_ *recordReader, r *mpReader) uint64 { return r.uint() }),
	mapField("approved_identity", func(w *Worker) *map[string]string { return &w.ApprovedIdentity }, always, mpString,
		func(d *recordReader, r *mpReader) string { return d.str(r) }),
	stringsField("capabilities", func(w *Worker) *[]string { return &w.Capabilities }, interned),
	stringsField("clear_gpus", func(w *Worker) *[]string { return &w.ClearGPUs }, omitEmpty),
	strField("cluster_key", func(w *Worker) *string { return &w.ClusterKey }, omitEmpty|interned),
	mapField("cordons", func(w *Worker) *map[string]string { return &w.Cordons }, omitEmpty, mpString,
		func(d *recordReader, r *mpReader) string { return d.str(r) }),
	strField("credential_id", func(w *Worker) *string { return &w.CredentialID }, always),
	boolField("deregister", func(w *Worker) *bool { return &w.Deregister }, omitEmpty),
	listField("devices", func(w *Worker) *[]command.Device { return &w.Devices }, deviceCodec, always),
	timeField("drain_deadline", func(w *Worker) *time.Time { return &w.DrainDeadline }),
	strField("drained_by", func(w *Worker) *string { return &w.DrainedBy }, omitEmpty|interned),
	stringsField("executors", func(w *Worker) *[]string { return &w.Executors }, interned),
	strField("external_worker_key", func(w *Worker) *string { return &w.ExternalWorkerKey }, omitEmpty),
	nestedField("holds", func(w *Worker) (any, bool) { return w.Holds, len(w.Holds) > 0 }),
	strField("id", func(w *Worker) *string { return &w.ID }, interned), // tasks name it
	strField("instance_id", func(w *Worker) *string { return &w.InstanceID }, omitEmpty),
	mapField("labels", func(w *Worker) *map[string]string { return &w.Labels }, omitEmpty, mpString,
		func(d *recordReader, r *mpReader) string { return d.str(r) }),
	nestedField("last_acquire", func(w *Worker) (any, bool) { return w.LastAcquire, w.LastAcquire != nil }),
	intField("max_tasks", func(w *Worker) *int { return &w.MaxTasks }, omitEmpty),
	listField("mig_layouts", func(w *Worker) *[]MIGLayout { return &w.MIGLayouts }, migLayoutCodec, omitEmpty),
	strField("origin", func(w *Worker) *string { return &w.Origin }, omitEmpty|interned),
	timeField("registered_at", func(w *Worker) *time.Time { return &w.RegisteredAt }),
	strField("registered_by", func(w *Worker) *string { return &w.RegisteredBy }, omitEmpty|interned),
	strField("status", func(w *Worker) *string { return &w.Status }, interned),
	strField("token_id", func(w *Worker) *string { return &w.TokenID }, omitEmpty|interned),
)

var deviceCodec = newCodec(
	strField("compute_capability", func(d *command.Device) *string { return &d.ComputeCapability }, omitEmpty|interned),
	strField("cuda_version", func(d *command.Device) *string { return &d.CUDAVersion }, omitEmpty|interned),
	strField("driver_version", func(d *command.Device) *string { return &d.DriverVersion }, omitEmpty|interned),
	strField("health", func(d *command.Device) *string { return &d.Health }, omitEmpty|interned),
	strField("health_reason", func(d *command.Device) *string { return &d.HealthReason }, omitEmpty|interned),
	boolField("healthy", func(d *command.Device) *bool { return &d.Healthy }, always),
	intField("index", func(d *command.Device) *int { return &d.Index }, always),
	boolField("cordoned", func(d *command.Device) *bool { return &d.Cordoned }, omitEmpty),
	strField("cordon_reason", func(d *command.Device) *string { return &d.CordonReason }, omitEmpty),
	nestedField("links", func(d *command.Device) (any, bool) { return d.Links, len(d.Links) > 0 }),
	uintField("memory_mib", func(d *command.Device) *uint64 { return &d.MemoryMiB }, always),
	boolField("mig_enabled", func(d *command.Device) *bool { return &d.MIGEnabled }, omitEmpty),
	strField("mig_error", func(d *command.Device) *string { return &d.MIGError }, omitEmpty),
	strField("mig_profile", func(d *command.Device) *string { return &d.MIGProfile }, omitEmpty|interned),
	uintField("mig_request", func(d *command.Device) *uint64 { return &d.MIGRequest }, omitEmpty),
	strField("name", func(d *command.Device) *string { return &d.Name }, interned),
	intPtrField("numa_node", func(d *command.Device) **int { return &d.NUMANode }),
	strField("parent", func(d *command.Device) *string { return &d.Parent }, omitEmpty|interned),
	strField("pci_device", func(d *command.Device) *string { return &d.PCIDevice }, omitEmpty|interned),
	boolField("pending_approval", func(d *command.Device) *bool { return &d.PendingApproval }, omitEmpty),
	strField("sharing", func(d *command.Device) *string { return &d.Sharing }, omitEmpty|interned),
	strField("uuid", func(d *command.Device) *string { return &d.UUID }, interned), // tasks name it
)

// A credential's record is the stored record's fields and the
// credential's own, in one map.
var credentialCodec = newCodec(
	timeField("created_at", func(c *Credential) *time.Time { return &c.CreatedAt }),
	strField("created_by", func(c *Credential) *string { return &c.CreatedBy }, omitEmpty|interned),
	timeField("expires_at", func(c *Credential) *time.Time { return &c.ExpiresAt }),
	stringsField("gpu_models", func(c *Credential) *[]string { return &c.GPUModels }, omitEmpty|interned),
	stringsField("groups", func(c *Credential) *[]string { return &c.Groups }, omitEmpty|interned),
	strField("hash", func(c *Credential) *string { return &c.Hash }, always),
	strField("id", func(c *Credential) *string { return &c.ID }, always),
	strField("instance_id", func(c *Credential) *string { return &c.InstanceID }, omitEmpty),
	strField("kind", func(c *Credential) *string { return &c.Kind }, interned),
	nestedField("labels", func(c *Credential) (any, bool) { return c.Labels, len(c.Labels) > 0 }),
	timeField("last_used_at", func(c *Credential) *time.Time { return &c.LastUsedAt }),
	intField("max_uses", func(c *Credential) *int { return &c.MaxUses }, omitEmpty),
	strField("name", func(c *Credential) *string { return &c.Name }, always),
	boolField("requires_approval", func(c *Credential) *bool { return &c.RequiresApproval }, omitEmpty),
	boolField("revoked", func(c *Credential) *bool { return &c.Revoked }, omitEmpty),
	timeField("revoked_at", func(c *Credential) *time.Time { return &c.RevokedAt }),
	strField("revoked_by", func(c *Credential) *string { return &c.RevokedBy }, omitEmpty|interned),
	stringsField("roles", func(c *Credential) *[]string { return &c.Roles }, omitEmpty|interned),
	strField("team", func(c *Credential) *string { return &c.Team }, omitEmpty|interned),
	intField("uses", func(c *Credential) *int { return &c.Uses }, omitEmpty),
	strField("worker_id", func(c *Credential) *string { return &c.WorkerID }, omitEmpty),
)

type auditEvent = command.AuditEvent

var auditCodec = newCodec(
	strField("actor", func(e *auditEvent) *string { return &e.Actor }, omitEmpty|interned),
	strField("code", func(e *auditEvent) *string { return &e.Code }, omitEmpty|interned),
	intField("count", func(e *auditEvent) *int { return &e.Count }, omitEmpty),
	strField("credential_id", func(e *auditEvent) *string { return &e.CredentialID }, omitEmpty|interned),
	strField("credential_kind", func(e *auditEvent) *string { return &e.CredentialKind }, omitEmpty|interned),
	strField("detail", func(e *auditEvent) *string { return &e.Detail }, omitEmpty),
	strField("kind", func(e *auditEvent) *string { return &e.Kind }, interned),
	strField("route", func(e *auditEvent) *string { return &e.Route }, omitEmpty|interned),
	uintField("seq", func(e *auditEvent) *uint64 { return &e.Seq }, omitEmpty),
	strField("source", func(e *auditEvent) *string { return &e.Source }, omitEmpty|interned),
	strField("subject", func(e *auditEvent) *string { return &e.Subject }, omitEmpty),
	strField("team", func(e *auditEvent) *string { return &e.Team }, omitEmpty|interned),
	timeField("time", func(e *auditEvent) *time.Time { return &e.Time }),
	strField("worker_id", func(e *auditEvent) *string { return &e.WorkerID }, omitEmpty|interned),
)

// task reads a task record; the attempt whose id is the task's current
// attempt id shares that string.
func (d *recordReader) task(body []byte) (*Task, bool) {
	t, ok := taskCodec.decode(d, body)
	for i := range t.Attempts {
		if a := &t.Attempts[i]; a.ID == t.AttemptID {
			a.ID = t.AttemptID
		}
	}
	return t, ok
}

func (d *recordReader) audit(body []byte) (command.AuditEvent, bool) {
	ev, ok := auditCodec.decode(d, body)
	return *ev, ok
}
