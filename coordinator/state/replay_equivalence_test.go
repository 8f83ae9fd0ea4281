package state

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
	"github.com/gpulayer/gpulayer/internal/fieldguard"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// history writes a random but plausible log: workers come, go and drain,
// jobs are submitted, placed (through Match, as acquire does), started,
// logged, finished, failed, lost and cancelled, groups and tokens change,
// artifacts are recorded, garbage is collected, and some commands are
// ones the store must refuse. It reads the store the log is applied to,
// as a leader reads its own state before it proposes.
type history struct {
	rng  *rand.Rand
	s    *Store
	now  time.Time
	n    int // makes ids unique
	log  []command.Command
	seqs map[string]int64 // next log sequence, by attempt
}

func newHistory(seed uint64) *history {
	return &history{rng: rand.New(rand.NewPCG(seed, 77)), s: New(), now: t0, seqs: map[string]int64{}}
}

func (h *history) id(prefix string) string {
	h.n++
	return fmt.Sprintf("%s%d", prefix, h.n)
}

func (h *history) pick(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return xs[h.rng.IntN(len(xs))]
}

// tasksIn lists the store's tasks in one of states (any state when none),
// in id order.
func (h *history) tasksIn(states ...string) []*Task {
	var out []*Task
	for _, t := range h.s.tasks.All() {
		if len(states) == 0 || slices.Contains(states, t.State) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (h *history) workerIDs() []string { return slices.Sorted(maps.Keys(h.s.workers)) }

func (h *history) jobIDs() []string { return slices.Clone(h.s.jobOrder) }

func (h *history) groupIDs() []string { return h.s.groups.IDs() }

// next returns the log's next command.
func (h *history) next() command.Command {
	h.now = h.now.Add(time.Duration(1+h.rng.IntN(3000)) * time.Millisecond)
	now := h.now
	w, j := h.pick(h.workerIDs()), h.pick(h.jobIDs())
	taskOf := func(states ...string) *Task {
		ts := h.tasksIn(states...)
		if len(ts) == 0 {
			return &Task{ID: "none", AttemptID: "none", WorkerID: "none"}
		}
		return ts[h.rng.IntN(len(ts))]
	}
	switch k := h.rng.IntN(100); {
	case k < 8:
		id := h.id("w")
		devs := make([]command.Device, h.rng.IntN(4))
		for i := range devs {
			devs[i] = command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", id, i), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}
		}
		return command.RegisterWorker{WorkerID: id, Credential: command.CredentialRecord{ID: "cred-" + id, Kind: "worker", Hash: "h-" + id, CreatedAt: now},
			Labels: map[string]string{"zone": h.pick([]string{"a", "b"})}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devs, Now: now}
	case k < 20:
		id := h.id("j")
		count := 1 + h.rng.IntN(3)
		ids := make([]string, count)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", id, i)
		}
		spec := command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: count, MaxAttempts: 1 + h.rng.IntN(3), Priority: h.rng.IntN(3)}
		if g := h.rng.IntN(3); g > 0 {
			spec.Resources = &command.Resources{GPUs: g}
		}
		if h.rng.IntN(2) == 0 { // an expected end, which backfill holds read
			spec.TimeoutSeconds = 60 + h.rng.IntN(600)
		}
		if gs := h.groupIDs(); len(gs) > 0 && h.rng.IntN(5) == 0 {
			spec.Target = &command.Target{Kind: api.TargetGroup, ID: h.pick(gs)}
		} else if count > 1 && h.rng.IntN(4) == 0 {
			spec.Gang = true
		}
		if count > 1 && !spec.Gang && h.rng.IntN(3) == 0 {
			spec.Parallelism = 1 + h.rng.IntN(count)
		}
		if h.rng.IntN(4) == 0 {
			spec.Checkpoint = &command.CheckpointSpec{Path: "ckpt"}
		}
		if js := h.jobIDs(); len(js) > 0 && h.rng.IntN(3) == 0 {
			conds := []string{command.DependSucceeded, command.DependFailed, command.DependFinished}
			spec.DependsOn = []command.Dependency{{Job: h.pick(js), Condition: conds[h.rng.IntN(len(conds))]}}
			if other := h.pick(js); other != spec.DependsOn[0].Job && h.rng.IntN(2) == 0 {
				spec.DependsOn = append(spec.DependsOn, command.Dependency{Job: other, Condition: conds[h.rng.IntN(len(conds))]})
			}
		}
		return command.SubmitJob{JobID: id, TaskIDs: ids, Spec: spec, CreatedBy: "admin", Team: h.team(), Now: now}
	case k < 36:
		// A placement as acquire makes it: the best match for a worker.
		c, ok, _ := h.s.MatchAt(now, w, "", 0, nil)
		if ok && len(c.Gang) > 0 {
			g := command.AssignGang{WorkerID: w, LeaseSeconds: 30, RequestID: h.id("r"), Now: now, Metered: h.rng.IntN(4) > 0}
			for _, m := range c.Gang {
				g.Members = append(g.Members, command.GangMember{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: h.id("a"), Devices: m.Devices})
			}
			if t := h.s.tasks.Get(c.Gang[0].TaskID); t != nil {
				g.JobID = t.JobID
			}
			return g
		}
		if !ok {
			t := taskOf(taskPending)
			return command.AssignTask{TaskID: t.ID, WorkerID: w, AttemptID: h.id("a"), Devices: []string{"GPU-x"}, LeaseSeconds: 30, Now: now}
		}
		return command.AssignTask{TaskID: c.TaskID, WorkerID: w, AttemptID: h.id("a"), Devices: c.Devices, LeaseSeconds: 30, RequestID: h.id("r"), Now: now, Metered: h.rng.IntN(4) > 0}
	case k < 46:
		t := taskOf(taskAssigned)
		return command.StartTask{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Now: now}
	case k < 54:
		t := taskOf(taskRunning)
		h.seqs[t.AttemptID]++
		return command.AppendLogs{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Stream: h.pick([]string{"stdout", "stderr"}),
			Seq: h.seqs[t.AttemptID], Data: strings.Repeat("x", h.rng.IntN(100)) + "\n", Now: now}
	case k < 64:
		t := taskOf(taskRunning, taskAssigned)
		f := command.FinishTask{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, SubmissionID: h.id("s"), BodyHash: h.id("b"),
			ExitCode: h.rng.IntN(2), Now: now, RequireProof: h.rng.IntN(2) == 0}
		if h.rng.IntN(2) == 0 {
			f.Output = []byte(fmt.Sprintf(`{"n":%d}`, h.n))
		}
		if h.rng.IntN(3) == 0 {
			f.Artifacts = []command.TaskArtifact{{Path: "out/model.bin", SHA256: fmt.Sprintf("%064x", h.n), Size: int64(h.n)}}
		}
		return f
	case k < 68:
		t := taskOf(taskRunning, taskAssigned)
		if len(t.Devices) > 0 && h.rng.IntN(3) == 0 { // its GPU failed under it
			return command.FailTask{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Reason: "XID 79", GPUFault: h.pick(t.Devices), Now: now}
		}
		return command.FailTask{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Reason: "exit 3", Permanent: h.rng.IntN(4) == 0, Now: now, Checkpoint: h.checkpoint(), RequireProof: h.rng.IntN(2) == 0}
	case k < 72:
		t := taskOf(taskRunning, taskAssigned)
		return command.LoseAttempt{TaskID: t.ID, AttemptID: t.AttemptID, Reason: "lease expired on worker " + t.WorkerID, Now: now}
	case k < 74:
		return command.CancelJob{JobID: j, By: "admin", Now: now}
	case k < 77:
		return command.SetWorkerStatus{WorkerID: w, Status: h.pick([]string{api.WorkerOffline, api.WorkerReady}), Now: now}
	case k < 80:
		action := h.pick([]string{command.ActionDrain, command.ActionResume, command.ActionStop, command.ActionDeregister})
		return command.ControlWorker{WorkerID: w, Action: action, Deadline: now.Add(time.Duration(h.rng.IntN(20)) * time.Second), By: "admin", Now: now}
	case k < 81:
		return command.ExpireDrains{Now: now}
	case k < 83:
		return command.CollectGarbage{Now: now, OlderThan: time.Duration(h.rng.IntN(60)) * time.Second, KeepFinished: h.rng.IntN(5), By: "leader", Artifacts: h.rng.IntN(2) == 0}
	case k < 85:
		return command.CreateGroup{GroupID: h.id("g"), Members: []command.GroupMember{wm(w)}, By: "admin", Now: now}
	case k < 87:
		g := h.pick(h.groupIDs())
		if h.rng.IntN(2) == 0 {
			return command.AddGroupMember{GroupID: g, Member: wm(w), By: "admin", Now: now}
		}
		return command.RemoveGroupMember{GroupID: g, Member: wm(w), By: "admin", Now: now}
	case k < 88:
		return command.DeleteGroup{GroupID: h.pick(h.groupIDs()), By: "admin", Now: now}
	case k < 90:
		id := h.id("tok")
		return command.CreateToken{Credential: command.CredentialRecord{ID: id, Kind: "client", Name: id, Roles: []string{"submit"}, Hash: "h-" + id, CreatedAt: now, CreatedBy: "admin", Team: h.team()}, Now: now}
	case k < 91:
		var toks []string
		for _, id := range h.s.credentials.IDs() { // sorted
			if c, _ := h.s.credentials.Get(id); strings.HasPrefix(id, "tok") && !c.Revoked {
				toks = append(toks, id)
			}
		}
		return command.RevokeToken{TokenID: h.pick(toks), By: "admin", Now: now}
	case k < 93:
		d := fmt.Sprintf("%064x", h.rng.IntN(8))
		if h.rng.IntN(2) == 0 {
			rec := command.RecordArtifact{Digest: d, Size: 1 + int64(h.rng.IntN(1000)), NodeID: "n1", Holders: []string{"n1", "n2"}, ChargeTeam: h.team(), By: h.pick(append([]string{"admin"}, h.workerIDs()...)), Now: now}
			if ts := h.tasksIn(taskRunning, taskAssigned); len(ts) > 0 && h.rng.IntN(2) == 0 { // a worker's upload, proved
				rec.WorkerID, rec.By = ts[0].WorkerID, "worker-"+ts[0].WorkerID
			}
			return rec
		}
		return command.SetArtifactHolder{Digest: d, NodeID: h.pick([]string{"n2", "n3"}), Held: h.rng.IntN(2) == 0, By: "leader", Now: now}
	case k < 94:
		return command.RegisterNode{NodeID: h.pick([]string{"n1", "n2", "n3"}), HTTPAddr: fmt.Sprintf("https://10.0.0.%d:8443", h.rng.IntN(9))}
	case k < 95:
		return command.AppendAudit{Events: []command.AuditEvent{{Time: now, Kind: "auth.failed", Actor: "x", Code: "unauthorized", Count: 1 + h.rng.IntN(3)}}}
	case k < 96:
		devs := make([]command.Device, h.rng.IntN(3))
		for i := range devs {
			devs[i] = command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", w, i), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: h.rng.IntN(4) > 0}
		}
		if pending := h.s.workers[w]; pending != nil && len(devs) > 0 {
			// Answer the worker's MIG layout request, if any, as done or failed.
			for _, m := range pending.PendingMIGLayouts() {
				devs[0].MIGRequest, devs[0].MIGError = m.Generation, h.pick([]string{"", "", "no placement left for 3g.40gb"})
			}
		}
		return command.UpdateWorker{WorkerID: w, Executors: []string{"exec"}, Devices: devs, MaxTasks: h.rng.IntN(3), Now: now}
	case k < 97:
		switch h.rng.IntN(11) {
		case 9:
			return command.ClearGPU{WorkerID: w, UUID: fmt.Sprintf("GPU-%s-0", w), By: "admin", Now: now}
		case 6, 7:
			return h.teamCommand(now)
		case 8:
			return h.preemption(now)
		case 0:
			return command.RevokeWorker{WorkerID: w, By: "admin", Now: now}
		case 5:
			// Mostly a worker it may forget (revoked or offline, holding
			// a task or not), else any (refused while it is live).
			var dead []string
			for _, id := range h.workerIDs() {
				if st := h.s.workers[id].Status; st == workerRevoked || st == workerOffline {
					dead = append(dead, id)
				}
			}
			if len(dead) > 0 && h.rng.IntN(4) > 0 {
				w = h.pick(dead)
			}
			return command.ForgetWorker{WorkerID: w, By: "admin", Source: "10.0.0.7", Now: now}
		case 1:
			t := taskOf(taskAssigned, taskRunning)
			return command.JoinRendezvous{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Address: "10.0.0.1", Port: 29500, Now: now}
		case 2:
			return command.PutCluster{ClusterKey: h.pick([]string{"c1", "c2"}), CIDRs: []string{"10.1.0.0/16"}, By: "admin", Now: now}
		case 3:
			return command.CreateEnrollment{ClusterKey: h.pick([]string{"c1", "c2"}), ExternalWorkerKey: h.id("ext"), PublicIP: "10.1.2.3", By: "admin", Now: now}
		case 4:
			id, cluster, key := h.id("w"), "c1", "none"
			pending := h.s.allowlist.Rows() // by key
			if len(pending) > 0 {
				e := pending[h.rng.IntN(len(pending))]
				cluster, key = e.ClusterKey, e.Key
			}
			return command.EnrollWorker{ClusterKey: cluster, ExternalWorkerKey: key, SourceIP: "10.1.2.3",
				WorkerID: id, Credential: command.CredentialRecord{ID: "cred-" + id, Kind: "worker", Hash: "h-" + id, CreatedAt: now},
				Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []command.Device{{UUID: "GPU-" + id, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}}, Now: now}
		default:
			return command.ApproveWorker{WorkerID: w, By: "admin", Now: now}
		}
	case k < 98 && h.rng.IntN(3) == 0:
		// Ask for, or clear, a MIG layout of one of a worker's GPUs.
		return command.SetMIGLayout{WorkerID: w, UUID: fmt.Sprintf("GPU-%s-%d", w, h.rng.IntN(2)), Layout: [][]string{nil, {"3g.40gb", "3g.40gb"}, {"7g.80gb"}}[h.rng.IntN(3)],
			Clear: h.rng.IntN(4) == 0, Auto: h.rng.IntN(4) == 0, By: "admin", Now: now}
	case k < 98:
		// Cordon, drain or lift one of a worker's GPUs (one it may not
		// have; a drain that does not cordon is refused).
		return command.CordonDevice{WorkerID: w, UUID: fmt.Sprintf("GPU-%s-%d", w, h.rng.IntN(2)), Cordon: h.rng.IntN(3) > 0, Drain: h.rng.IntN(3) == 0, Reason: h.pick([]string{"", "fan noise", "benchmark"}), By: "admin", Now: now}
	default:
		// Two commands in one entry, as the batcher writes them.
		t := taskOf(taskAssigned)
		a, _ := command.Encode(command.StartTask{TaskID: t.ID, WorkerID: t.WorkerID, AttemptID: t.AttemptID, Now: now})
		b, _ := command.Encode(command.CancelJob{JobID: j, By: "admin", Now: now})
		return command.Batch{Entries: [][]byte{a, b}}
	}
}

// checkpoint is, half the time, a checkpoint an attempt's end reports:
// a recorded artifact (refused where its job has no checkpoint path), or
// one never uploaded (refused).
func (h *history) checkpoint() *command.Checkpoint {
	if h.rng.IntN(2) == 0 {
		return nil
	}
	d := fmt.Sprintf("%064x", h.rng.IntN(8))
	size := int64(1)
	if a, ok := h.s.artifacts.Get(d); ok {
		size = a.Size
	}
	return &command.Checkpoint{SHA256: d, Size: size, Format: h.pick([]string{command.CheckpointFile, command.CheckpointTar})}
}

// preemption is the preemption the leader would decide now, or else a
// stale one (refused) or a sweep of expired holds.
func (h *history) preemption(now time.Time) command.Command {
	if c, ok := h.s.PlanPreemption(now, preemption.Options{MinRuntime: time.Duration(h.rng.IntN(10)) * time.Second, HoldSlack: time.Duration(1+h.rng.IntN(20)) * time.Second}); ok {
		return c
	}
	if h.rng.IntN(2) == 0 {
		return command.PreemptTasks{Now: now}
	}
	t := h.tasksIn(taskRunning)
	p := h.tasksIn(taskPending)
	if len(t) == 0 || len(p) == 0 {
		return command.PreemptTasks{Now: now}
	}
	v := t[h.rng.IntN(len(t))]
	c := command.PreemptTasks{For: p[h.rng.IntN(len(p))].ID, WorkerID: v.WorkerID, Victims: []command.Victim{{TaskID: v.ID, AttemptID: v.AttemptID}}, HoldUntil: now.Add(time.Minute), Now: now}
	if h.rng.IntN(2) == 0 { // the form naming each victim's worker
		c.Victims[0].WorkerID = v.WorkerID
	}
	return c
}

// applyWire applies c to s as Raft delivers it: encoded, then decoded.
// A batch's result is its entries' results.
func applyWire(t *testing.T, s *Store, c command.Command) []Result {
	t.Helper()
	b, err := command.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := command.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	switch r := s.Apply(dc).(type) {
	case Result:
		return []Result{r}
	case []Result:
		return r
	default:
		t.Fatalf("%T answered %T", c, r)
		return nil
	}
}

// resultDiff says how two answers to one entry differ ("" when alike).
func resultDiff(got, want []Result) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d results vs %d", len(got), len(want))
	}
	for i := range got {
		if fmt.Sprint(got[i].Err()) != fmt.Sprint(want[i].Err()) {
			return fmt.Sprintf("result %d: %v vs %v", i, got[i].Err(), want[i].Err())
		}
		if d := fieldguard.Diff(got[i].value, want[i].value); d != "" {
			return fmt.Sprintf("result %d: %s", i, d)
		}
	}
	return ""
}

// stateDiffs compares two stores record by record, every exported field
// of every table, and what each would place next on every worker (the
// pending queue, an index no snapshot holds, rebuilt by a restore).
func stateDiffs(a, b *Store, now time.Time) []string {
	ca, cb := &a.Capture().t, &b.Capture().t
	var bad []string
	check := func(what string, x, y any) {
		if d := fieldguard.Diff(x, y); d != "" {
			bad = append(bad, what+": "+d)
		}
	}
	check("meta", []any{ca.BootstrapGeneration, ca.Seq, ca.AuditSeq}, []any{cb.BootstrapGeneration, cb.Seq, cb.AuditSeq})
	// The small tables, by key: their order in a capture is the maps'.
	small := func(c *snapcodec.Tables) map[string]any {
		return map[string]any{
			"credentials": keyed(c.Credentials, func(x creds.Credential) string { return x.ID }),
			"workers":     keyed(c.Workers, func(x Worker) string { return x.ID }),
			"groups":      keyed(c.Groups, func(x groups.Group) string { return x.ID }),
			"teams":       keyed(c.Teams, func(x teams.Team) string { return x.Name }),
			"usage":       keyed(c.Usage, func(x usage.Row) string { return fmt.Sprint(x.Key) }),
			"totals":      keyed(c.UsageTotals, func(x usage.Total) string { return x.Team + "/" + x.Model }),
			"clusters":    keyed(c.Clusters, func(x enroll.Cluster) string { return x.Key }),
			"enrollments": keyed(c.Enrollments, func(x enroll.Enrollment) string { return x.Key }),
			"artifacts":   keyed(c.Artifacts, func(x artifacts.Artifact) string { return x.Digest }),
		}
	}
	check("tables", small(ca), small(cb))
	check("job order", ca.JobOrder, cb.JobOrder)
	check("jobs", frozenEntries(&ca.Jobs), frozenEntries(&cb.Jobs))
	check("tasks", frozenEntries(&ca.Tasks), frozenEntries(&cb.Tasks))
	check("submissions", frozenEntries(&ca.Submissions), frozenEntries(&cb.Submissions))
	check("idempotency", frozenEntries(&ca.Idempotency), frozenEntries(&cb.Idempotency))
	check("nodes", ca.Nodes, cb.Nodes)
	check("audit", ca.Audit, cb.Audit)
	check("refusals", ca.Refusals, cb.Refusals)
	for _, w := range slices.Sorted(maps.Keys(a.workers)) {
		x, okx, errx := a.MatchAt(now, w, "", 0, nil)
		y, oky, erry := b.MatchAt(now, w, "", 0, nil)
		if okx != oky || fmt.Sprint(errx) != fmt.Sprint(erry) {
			bad = append(bad, fmt.Sprintf("match for %s: %v %v vs %v %v", w, okx, errx, oky, erry))
		}
		check("match for "+w, x, y)
	}
	return bad
}

// keyed maps records by their keys.
func keyed[T any](xs []T, key func(T) string) map[string]T {
	out := make(map[string]T, len(xs))
	for _, x := range xs {
		out[key(x)] = x
	}
	return out
}

// frozenEntries lists a frozen table's entries in key order, as a map
// the comparison can walk.
func frozenEntries[V any](m *cow.Frozen[V]) map[string]V {
	out := make(map[string]V, m.Len())
	for k, v := range m.All() {
		out[k] = v
	}
	return out
}

// A replica that restored a snapshot taken anywhere in the log and
// replayed the rest holds exactly what one that replayed the whole log
// holds: every field of every record, and what it would place next. And
// each command after the snapshot point gets the same result on both.
// The log is random (history): CI runs histories from seed 0 on, and
// GPULAYER_REPLAY_SEED and GPULAYER_REPLAY_HISTORIES run others (make
// replay-campaign); a failure names its seed.
func TestSnapshotAndReplayAgree(t *testing.T) {
	const length = 700
	first, histories := testenv.Uint(t, "GPULAYER_REPLAY_SEED", 0), testenv.Uint(t, "GPULAYER_REPLAY_HISTORIES", 12)
	kinds := map[string][2]int{} // by command type: applied, refused
	defer func() { t.Logf("commands applied and refused, by type: %v", kinds) }()
	for seed := first; seed < first+histories; seed++ {
		h := newHistory(seed)
		h.log = append(h.log, command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "x", CreatedAt: t0}}, Now: t0})
		applyWire(t, h.s, h.log[0])
		points := map[int][]byte{}
		var results [][]Result
		applied, refused := 0, 0
		for i := 1; i < length; i++ {
			if h.rng.IntN(60) == 0 || i == length/2 {
				points[i] = snapshotBytes(t, h.s)
			}
			c := h.next()
			h.log = append(h.log, c)
			r := applyWire(t, h.s, c)
			results = append(results, r)
			k := kinds[fmt.Sprintf("%T", c)]
			for _, x := range r {
				if x.Err() != nil {
					refused++
					k[1]++
				} else {
					applied++
					k[0]++
				}
			}
			kinds[fmt.Sprintf("%T", c)] = k
		}
		if applied < length/3 {
			t.Fatalf("seed %d: only %d of %d commands applied (%d refused): the history says little", seed, applied, length, refused)
		}
		for _, at := range slices.Sorted(maps.Keys(points)) {
			r := New()
			if err := r.Restore(bytes.NewReader(points[at])); err != nil {
				t.Fatalf("seed %d: restore the snapshot taken before entry %d: %v", seed, at, err)
			}
			for i := at; i < len(h.log); i++ {
				if d := resultDiff(applyWire(t, r, h.log[i]), results[i-1]); d != "" {
					t.Fatalf("seed %d, snapshot before entry %d: entry %d (%T) answered differently after the restore than on the replica that replayed it all: %s",
						seed, at, i, h.log[i], d)
				}
			}
			if bad := stateDiffs(h.s, r, h.now); len(bad) > 0 {
				t.Fatalf("seed %d: the replica restored from the snapshot before entry %d disagrees with the one that replayed the log:\n  %s",
					seed, at, strings.Join(bad, "\n  "))
			}
		}
		t.Logf("seed %d: %d commands (%d applied, %d refused), %d snapshot points, %d tasks, %d workers",
			seed, len(h.log), applied, refused, len(points), h.s.tasks.Len(), len(h.s.workers))
	}
}

// team picks a team for a job or token: none (before teams), default,
// or one created (perhaps deleted since, which is refused).
func (h *history) team() string {
	if h.rng.IntN(8) == 0 {
		return h.pick([]string{"", "t-gone"})
	}
	return h.pick(h.s.teams.Names()) // default among them
}

// teamCommand creates, changes or deletes a team (deleting one with
// unfinished jobs, or default, is refused).
func (h *history) teamCommand(now time.Time) command.Command {
	switch h.rng.IntN(3) {
	case 0:
		limit, bytes := int64(h.rng.IntN(400)), int64(h.rng.IntN(1<<20))
		return command.CreateTeam{Name: h.id("team"), Settings: command.TeamSettings{WeightCenti: 50 + int64(h.rng.IntN(200)), QuotaCentiGPUs: int64(h.rng.IntN(800)), BorrowLimitCenti: &limit, ArtifactQuotaBytes: &bytes}, By: "admin", Now: now}
	case 1:
		q := int64(h.rng.IntN(800))
		c := command.UpdateTeam{Name: h.team(), QuotaCentiGPUs: &q, ClearBorrowLimit: h.rng.IntN(2) == 0, By: "admin", Now: now}
		if h.rng.IntN(2) == 0 {
			b := int64(h.rng.IntN(1 << 20))
			c.ArtifactQuotaBytes = &b
		} else {
			c.ClearArtifactQuota = h.rng.IntN(2) == 0
		}
		return c
	default:
		return command.DeleteTeam{Name: h.team(), By: "admin", Now: now}
	}
}
