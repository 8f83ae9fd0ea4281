package state

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Workers and credentials, one of each a registered worker, were the
// records go-msgpack still wrote and read by reflection: 10,000 workers
// of eight GPUs took about a tenth of a second each way in S6. They are
// written and read here as the tasks are (codec_task.go, codec_read.go):
// the writer's bytes are go-msgpack's (TestWorkerRecordBytesMatchTheCodec),
// and the reader takes only what the writer writes, leaving the rest
// (a last acquire, device links) to go-msgpack.

// appendWorker appends x's record, devices included, as go-msgpack
// writes it.
func (w *recordWriter) appendWorker(b []byte, x *Worker) ([]byte, error) {
	r := &w.worker
	r.reset()
	r.time("approved_at", x.ApprovedAt)
	r.optStr("approved_by", x.ApprovedBy)
	if len(x.ApprovedDevices) > 0 {
		r.key("approved_devices")
		r.body = mpMap(r.body, x.ApprovedDevices, mpUint)
	}
	r.strings("capabilities", x.Capabilities)
	r.optStrings("clear_gpus", x.ClearGPUs)
	r.optStr("cluster_key", x.ClusterKey)
	r.str("credential_id", x.CredentialID)
	r.optBool("deregister", x.Deregister)
	r.key("devices")
	if x.Devices == nil {
		r.body = append(r.body, mpNil)
	} else {
		r.body = mpArrayLen(r.body, len(x.Devices))
		for i := range x.Devices {
			var err error
			if r.body, err = w.appendDevice(r.body, &x.Devices[i]); err != nil && r.err == nil {
				r.err = err
			}
		}
	}
	r.time("drain_deadline", x.DrainDeadline)
	r.optStr("drained_by", x.DrainedBy)
	r.strings("executors", x.Executors)
	r.optStr("external_worker_key", x.ExternalWorkerKey)
	r.str("id", x.ID)
	r.optStr("instance_id", x.InstanceID)
	if len(x.Labels) > 0 {
		r.key("labels")
		r.body = mpMap(r.body, x.Labels, mpString)
	}
	r.optNested("last_acquire", x.LastAcquire, x.LastAcquire != nil)
	r.optInt("max_tasks", int64(x.MaxTasks))
	r.optStr("origin", x.Origin)
	r.time("registered_at", x.RegisteredAt)
	r.optStr("registered_by", x.RegisteredBy)
	r.str("status", x.Status)
	r.optStr("token_id", x.TokenID)
	return r.appendTo(b)
}

// appendDevice appends one GPU of a worker as go-msgpack writes it.
func (w *recordWriter) appendDevice(b []byte, d *command.Device) ([]byte, error) {
	r := &w.device
	r.reset()
	r.optStr("compute_capability", d.ComputeCapability)
	r.optStr("cuda_version", d.CUDAVersion)
	r.optStr("driver_version", d.DriverVersion)
	r.optStr("health", d.Health)
	r.optStr("health_reason", d.HealthReason)
	r.bool("healthy", d.Healthy)
	r.int("index", int64(d.Index))
	r.optNested("links", d.Links, len(d.Links) > 0)
	r.uint("memory_mib", d.MemoryMiB)
	r.optBool("mig_enabled", d.MIGEnabled)
	r.optStr("mig_profile", d.MIGProfile)
	r.str("name", d.Name)
	r.optIntPtr("numa_node", d.NUMANode)
	r.optStr("parent", d.Parent)
	r.optStr("pci_device", d.PCIDevice)
	r.optBool("pending_approval", d.PendingApproval)
	r.optStr("sharing", d.Sharing)
	r.str("uuid", d.UUID)
	return r.appendTo(b)
}

// appendCredential appends c's record as go-msgpack writes it: the
// stored record's fields and the credential's own, in one map.
func (w *recordWriter) appendCredential(b []byte, c *Credential) ([]byte, error) {
	r := &w.cred
	r.reset()
	r.time("created_at", c.CreatedAt)
	r.optStr("created_by", c.CreatedBy)
	r.time("expires_at", c.ExpiresAt)
	r.optStrings("gpu_models", c.GPUModels)
	r.optStrings("groups", c.Groups)
	r.str("hash", c.Hash)
	r.str("id", c.ID)
	r.optStr("instance_id", c.InstanceID)
	r.str("kind", c.Kind)
	r.optNested("labels", c.Labels, len(c.Labels) > 0)
	r.time("last_used_at", c.LastUsedAt)
	r.optInt("max_uses", int64(c.MaxUses))
	r.str("name", c.Name)
	r.optBool("requires_approval", c.RequiresApproval)
	r.optBool("revoked", c.Revoked)
	r.time("revoked_at", c.RevokedAt)
	r.optStr("revoked_by", c.RevokedBy)
	r.optStrings("roles", c.Roles)
	r.optInt("uses", int64(c.Uses))
	r.optStr("worker_id", c.WorkerID)
	return r.appendTo(b)
}

// worker reads a worker record, devices included.
func (d *recordReader) worker(body []byte) (*Worker, bool) {
	r := &mpReader{b: body, ok: true}
	x := &Worker{}
	var seen fields
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		switch string(r.strBytes()) {
		case "approved_at":
			r.ok = r.ok && seen.first(0)
			x.ApprovedAt = r.time()
		case "approved_by":
			r.ok = r.ok && seen.first(1)
			x.ApprovedBy = d.str(r)
		case "approved_devices":
			r.ok = r.ok && seen.first(20)
			x.ApprovedDevices = readMap(r, (*mpReader).uint)
		case "labels":
			r.ok = r.ok && seen.first(21)
			x.Labels = readMap(r, func(r *mpReader) string { return d.str(r) })
		case "capabilities":
			r.ok = r.ok && seen.first(2)
			x.Capabilities = d.strs(r, true)
		case "clear_gpus":
			r.ok = r.ok && seen.first(3)
			x.ClearGPUs = d.strs(r, false)
		case "cluster_key":
			r.ok = r.ok && seen.first(4)
			x.ClusterKey = d.str(r)
		case "credential_id":
			r.ok = r.ok && seen.first(5)
			x.CredentialID = plain(r)
		case "deregister":
			r.ok = r.ok && seen.first(6)
			x.Deregister = r.boolean()
		case "devices":
			r.ok = r.ok && seen.first(7)
			x.Devices = d.devices(r)
		case "drain_deadline":
			r.ok = r.ok && seen.first(8)
			x.DrainDeadline = r.time()
		case "drained_by":
			r.ok = r.ok && seen.first(9)
			x.DrainedBy = d.str(r)
		case "executors":
			r.ok = r.ok && seen.first(10)
			x.Executors = d.strs(r, true)
		case "external_worker_key":
			r.ok = r.ok && seen.first(11)
			x.ExternalWorkerKey = plain(r)
		case "id":
			r.ok = r.ok && seen.first(12)
			x.ID = d.str(r)
		case "instance_id":
			r.ok = r.ok && seen.first(13)
			x.InstanceID = plain(r)
		case "max_tasks":
			r.ok = r.ok && seen.first(14)
			x.MaxTasks = r.intN()
		case "origin":
			r.ok = r.ok && seen.first(15)
			x.Origin = d.str(r)
		case "registered_at":
			r.ok = r.ok && seen.first(16)
			x.RegisteredAt = r.time()
		case "registered_by":
			r.ok = r.ok && seen.first(17)
			x.RegisteredBy = d.str(r)
		case "status":
			r.ok = r.ok && seen.first(18)
			x.Status = d.str(r)
		case "token_id":
			r.ok = r.ok && seen.first(19)
			x.TokenID = d.str(r)
		default: // a last acquire, or a field not known here
			r.ok = false
		}
	}
	return x, r.ok && r.i == len(body)
}

// devices reads a worker's GPUs (nil: nil).
func (d *recordReader) devices(r *mpReader) []command.Device {
	if r.ok && r.i < len(r.b) && r.b[r.i] == mpNil {
		r.i++
		return nil
	}
	n := r.arrayLen()
	if !r.ok {
		return nil
	}
	out := make([]command.Device, 0, min(n, maxInitLen)) // see strs
	for ; n > 0 && r.ok; n-- {
		out = append(out, command.Device{})
		x := &out[len(out)-1]
		var seen fields
		for m := r.mapLen(); m > 0 && r.ok; m-- {
			switch string(r.strBytes()) {
			case "compute_capability":
				r.ok = r.ok && seen.first(0)
				x.ComputeCapability = d.str(r)
			case "cuda_version":
				r.ok = r.ok && seen.first(1)
				x.CUDAVersion = d.str(r)
			case "driver_version":
				r.ok = r.ok && seen.first(2)
				x.DriverVersion = d.str(r)
			case "health":
				r.ok = r.ok && seen.first(3)
				x.Health = d.str(r)
			case "health_reason":
				r.ok = r.ok && seen.first(4)
				x.HealthReason = d.str(r)
			case "healthy":
				r.ok = r.ok && seen.first(5)
				x.Healthy = r.boolean()
			case "index":
				r.ok = r.ok && seen.first(6)
				x.Index = r.intN()
			case "memory_mib":
				r.ok = r.ok && seen.first(7)
				x.MemoryMiB = r.uint()
			case "mig_enabled":
				r.ok = r.ok && seen.first(8)
				x.MIGEnabled = r.boolean()
			case "mig_profile":
				r.ok = r.ok && seen.first(9)
				x.MIGProfile = d.str(r)
			case "name":
				r.ok = r.ok && seen.first(10)
				x.Name = d.str(r)
			case "numa_node":
				r.ok = r.ok && seen.first(11)
				x.NUMANode = intPtr(r)
			case "parent":
				r.ok = r.ok && seen.first(12)
				x.Parent = d.str(r)
			case "pci_device":
				r.ok = r.ok && seen.first(13)
				x.PCIDevice = d.str(r)
			case "pending_approval":
				r.ok = r.ok && seen.first(14)
				x.PendingApproval = r.boolean()
			case "sharing":
				r.ok = r.ok && seen.first(15)
				x.Sharing = d.str(r)
			case "uuid":
				r.ok = r.ok && seen.first(16)
				x.UUID = d.str(r) // tasks name it
			default: // links, or a field not known here
				r.ok = false
			}
		}
		if !r.ok {
			return nil
		}
	}
	return out
}

// credential reads a credential record.
func (d *recordReader) credential(body []byte) (*Credential, bool) {
	r := &mpReader{b: body, ok: true}
	c := &Credential{}
	var seen fields
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		switch string(r.strBytes()) {
		case "created_at":
			r.ok = r.ok && seen.first(0)
			c.CreatedAt = r.time()
		case "created_by":
			r.ok = r.ok && seen.first(1)
			c.CreatedBy = d.str(r)
		case "expires_at":
			r.ok = r.ok && seen.first(2)
			c.ExpiresAt = r.time()
		case "gpu_models":
			r.ok = r.ok && seen.first(3)
			c.GPUModels = d.strs(r, true)
		case "groups":
			r.ok = r.ok && seen.first(4)
			c.Groups = d.strs(r, true)
		case "hash":
			r.ok = r.ok && seen.first(5)
			c.Hash = plain(r)
		case "id":
			r.ok = r.ok && seen.first(6)
			c.ID = plain(r)
		case "instance_id":
			r.ok = r.ok && seen.first(7)
			c.InstanceID = plain(r)
		case "kind":
			r.ok = r.ok && seen.first(8)
			c.Kind = d.str(r)
		case "last_used_at":
			r.ok = r.ok && seen.first(9)
			c.LastUsedAt = r.time()
		case "max_uses":
			r.ok = r.ok && seen.first(10)
			c.MaxUses = r.intN()
		case "name":
			r.ok = r.ok && seen.first(11)
			c.Name = plain(r)
		case "requires_approval":
			r.ok = r.ok && seen.first(12)
			c.RequiresApproval = r.boolean()
		case "revoked":
			r.ok = r.ok && seen.first(13)
			c.Revoked = r.boolean()
		case "revoked_at":
			r.ok = r.ok && seen.first(14)
			c.RevokedAt = r.time()
		case "revoked_by":
			r.ok = r.ok && seen.first(15)
			c.RevokedBy = d.str(r)
		case "roles":
			r.ok = r.ok && seen.first(16)
			c.Roles = d.strs(r, true)
		case "uses":
			r.ok = r.ok && seen.first(17)
			c.Uses = r.intN()
		case "worker_id":
			r.ok = r.ok && seen.first(18)
			c.WorkerID = plain(r)
		default: // labels, or a field not known here
			r.ok = false
		}
	}
	return c, r.ok && r.i == len(body)
}

// mpMap appends m as go-msgpack writes it with the snapshot's handle:
// keys sorted, each value by put.
func mpMap[V any](b []byte, m map[string]V, put func([]byte, V) []byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = mpMapLen(b, len(m))
	for _, k := range keys {
		b = put(mpString(b, k), m[k])
	}
	return b
}

// readMap reads a non-empty map of strs to values read by get, each key
// once.
func readMap[V any](r *mpReader, get func(*mpReader) V) map[string]V {
	n := r.mapLen()
	if !r.ok || n == 0 {
		r.ok = false
		return nil
	}
	m := make(map[string]V, min(n, maxInitLen)) // see strs
	for ; n > 0 && r.ok; n-- {
		k := string(r.strBytes())
		if _, dup := m[k]; dup {
			r.ok = false
		}
		m[k] = get(r)
	}
	return m
}
