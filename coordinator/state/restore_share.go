package state

// A restore decodes every string of every record on its own: a task's job
// id, its worker id, its state, the same spec hash on a thousand jobs of
// one spec are each a separate allocation, although most name something
// another record already holds. shareStrings, run once the tables are
// loaded, points each such field at one copy (the record's own id where
// the string names a record, else the first copy seen), so the decoded
// duplicates are garbage at the next GC. Values are unchanged, only where
// their bytes live: strings are immutable, so sharing them is safe.
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

// shareStrings points duplicated strings of the loaded tables at one copy.
func (s *Store) shareStrings() {
	in := interner{}
	configs := map[string][]byte{}
	for _, w := range s.workers {
		in[w.ID] = w.ID
		w.Status = in.of(w.Status)
		for i := range w.Devices {
			w.Devices[i].UUID = in.of(w.Devices[i].UUID)
			w.Devices[i].Name = in.of(w.Devices[i].Name)
			w.Devices[i].DriverVersion = in.of(w.Devices[i].DriverVersion)
			w.Devices[i].CUDAVersion = in.of(w.Devices[i].CUDAVersion)
			w.Devices[i].ComputeCapability = in.of(w.Devices[i].ComputeCapability)
		}
	}
	for _, j := range s.jobs.all() {
		j.SpecHash = in.of(j.SpecHash)
		j.CreatedBy = in.of(j.CreatedBy)
		j.Spec.Name = in.of(j.Spec.Name)
		j.Spec.Executor = in.of(j.Spec.Executor)
		j.Spec.Capability = in.of(j.Spec.Capability)
		j.Spec.IdempotencyKey = in.of(j.Spec.IdempotencyKey)
		if len(j.Spec.Config) > 0 {
			if c, ok := configs[string(j.Spec.Config)]; ok {
				j.Spec.Config = c
			} else {
				configs[string(j.Spec.Config)] = j.Spec.Config
			}
		}
		for i, id := range j.TaskIDs {
			if t := s.tasks.get(id); t != nil {
				j.TaskIDs[i] = t.ID
			}
		}
	}
	for _, t := range s.tasks.all() {
		if j := s.jobs.get(t.JobID); j != nil {
			t.JobID = j.ID
		}
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
	for k, id := range s.idempotency.all() {
		if j := s.jobs.get(id); j != nil {
			s.idempotency.set(k, j.ID)
		}
	}
}
