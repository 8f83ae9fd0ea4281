package snapcodec

import "github.com/gpulayer/gpulayer/coordinator/state/record"

// A restore would otherwise hold every string of every record on its own:
// a task's job id, its worker id, its state, the same spec hash on a
// thousand jobs of one spec would each be a separate allocation, although
// most name something another record already holds. A restore shares the
// values that repeat (states, worker ids, spec fields) through one
// interner: the record reader (read.go) takes each from it as it
// reads, and a record decoded by go-msgpack instead, or read from a
// version 1 JSON snapshot, has its strings pointed at the interner's
// copies afterwards (the share methods below). Ids, each naming one
// record, are shared by load with the record they name (shareIDs).
// Values are unchanged, only where their bytes live: strings are
// immutable, so sharing them is safe.
//
// A spec's Config bytes are shared as well between jobs whose Config is
// equal: the store never changes a stored spec in place.

// interner hands out one copy of each distinct string it is given. It
// lives for one restore.
type interner map[string]string

func (in interner) of(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in[s]; ok {
		return c
	}
	in[s] = s
	return s
}

// shareWorker points w's repeated strings at the interner's copies.
func (in interner) shareWorker(w *record.Worker) {
	w.ID = in.of(w.ID)
	w.Status = in.of(w.Status)
	for i := range w.Devices {
		d := &w.Devices[i]
		d.UUID = in.of(d.UUID)
		d.Name = in.of(d.Name)
		d.DriverVersion = in.of(d.DriverVersion)
		d.CUDAVersion = in.of(d.CUDAVersion)
		d.ComputeCapability = in.of(d.ComputeCapability)
	}
}

// shareJob points j's repeated strings at the interner's copies, and its
// spec's Config at an equal one already seen.
func (in interner) shareJob(j *record.Job, configs map[string][]byte) {
	j.SpecHash = in.of(j.SpecHash)
	j.CreatedBy = in.of(j.CreatedBy)
	j.Spec.Name = in.of(j.Spec.Name)
	j.Spec.Executor = in.of(j.Spec.Executor)
	j.Spec.Capability = in.of(j.Spec.Capability)
	if len(j.Spec.Config) > 0 {
		if c, ok := configs[string(j.Spec.Config)]; ok {
			j.Spec.Config = c
		} else {
			configs[string(j.Spec.Config)] = j.Spec.Config
		}
	}
}

// shareTask points t's repeated strings at the interner's copies.
func (in interner) shareTask(t *record.Task) {
	t.State = in.of(t.State)
	t.WorkerID = in.of(t.WorkerID)
	t.SubmittedBy = in.of(t.SubmittedBy)
	t.ExecutedBy = in.of(t.ExecutedBy)
	for i := range t.Devices {
		t.Devices[i] = in.of(t.Devices[i])
	}
	for i := range t.Attempts {
		a := &t.Attempts[i]
		if a.ID == t.AttemptID {
			a.ID = t.AttemptID
		}
		a.WorkerID = in.of(a.WorkerID)
		a.State = in.of(a.State)
		for k := range a.Devices {
			a.Devices[k] = in.of(a.Devices[k])
		}
	}
}

// share shares the strings of a snapshot decoded whole (version 1, JSON)
// as the record reader shares those of a version 2 or 3 one; load shares
// ids with the records they name.
func (snap *Image) share() {
	in, configs := interner{}, map[string][]byte{}
	for _, w := range snap.Workers {
		if w != nil {
			in.shareWorker(w)
		}
	}
	for _, j := range snap.Jobs {
		if j != nil {
			in.shareJob(j, configs)
		}
	}
	for _, t := range snap.Tasks {
		if t != nil {
			in.shareTask(t)
		}
	}
}
