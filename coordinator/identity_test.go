package coordinator_test

// The tests of seed 002's section 6, over the real HTTP server: 6.1 cycle
// detection, 6.2 resolution under churn, 6.3 attribution after terminal
// states, 6.4 cross-client claim with one credential, 6.5 auth required,
// 6.6 rotation during an in-flight claim, 6.7 the probe that names another
// worker.

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

var trueConfig = []byte(`{"command":"true"}`)

func execJob() api.JobSpec { return api.JobSpec{Executor: "exec", Config: trueConfig} }

// enroll registers a worker that takes any capability and returns its
// credential and a client that acts as it.
func enroll(t *testing.T, h *coordinatortest.Harness, id string, caps ...string) (string, *client.Client) {
	t.Helper()
	if caps == nil {
		caps = []string{"*"}
	}
	reg, err := h.Client(t, h.JoinToken).Register(t.Context(), api.RegisterRequest{WorkerID: id, Capabilities: caps, Executors: []string{"exec"}})
	if err != nil || reg.WorkerToken == "" {
		t.Fatalf("register %s: %+v %v", id, reg, err)
	}
	return reg.WorkerToken, h.Client(t, reg.WorkerToken)
}

func groupRef(id string) api.GroupMember  { return api.GroupMember{Kind: api.MemberGroup, ID: id} }
func workerRef(id string) api.GroupMember { return api.GroupMember{Kind: api.MemberWorker, ID: id} }

func mustGroup(t *testing.T, admin *client.Client, id string, members ...api.GroupMember) {
	t.Helper()
	if _, err := admin.CreateGroup(t.Context(), api.CreateGroupRequest{GroupID: id, Members: members}); err != nil {
		t.Fatalf("create group %s: %v", id, err)
	}
}

func acquireOne(t *testing.T, w *client.Client) *api.Assignment {
	t.Helper()
	a, err := w.Acquire(t.Context(), api.AcquireRequest{})
	if err != nil || a.Task == nil {
		t.Fatalf("acquire: %+v %v", a, err)
	}
	return a.Task
}

// Seed 002 §6.1.
func TestSeed61GroupCycleDetection(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	enroll(t, h, "worker-x")
	mustGroup(t, admin, "team-c")
	mustGroup(t, admin, "team-b", groupRef("team-c"))
	mustGroup(t, admin, "team-a", groupRef("team-b"))

	refused := []struct {
		name string
		do   func() error
	}{
		{"direct", func() error { _, err := admin.AddGroupMember(ctx, "team-a", groupRef("team-a")); return err }},
		{"two-step", func() error { _, err := admin.AddGroupMember(ctx, "team-b", groupRef("team-a")); return err }},
		{"indirect", func() error { _, err := admin.AddGroupMember(ctx, "team-c", groupRef("team-a")); return err }},
		{"self on create", func() error {
			_, err := admin.CreateGroup(ctx, api.CreateGroupRequest{GroupID: "team-d", Members: []api.GroupMember{groupRef("team-d")}})
			return err
		}},
	}
	for _, c := range refused {
		before := snapshot(t, h)
		if err := c.do(); !client.IsCode(err, api.CodeCycleDetected) {
			t.Errorf("%s: %v, want cycle_detected", c.name, err)
		}
		if !bytes.Equal(before, snapshot(t, h)) {
			t.Errorf("%s: a refused write changed the state", c.name)
		}
	}

	// No false positives: a worker in two groups, and a diamond of groups.
	mustGroup(t, admin, "left", workerRef("worker-x"))
	mustGroup(t, admin, "right", workerRef("worker-x"))
	mustGroup(t, admin, "top", groupRef("left"), groupRef("right"))
	if _, err := admin.AddGroupMember(ctx, "team-c", groupRef("top")); err != nil {
		t.Fatalf("diamond refused: %v", err)
	}
	g, err := admin.Group(ctx, "team-a")
	if err != nil || len(g.Workers) != 1 || g.Workers[0] != "worker-x" {
		t.Fatalf("team-a resolves to %+v %v", g.Workers, err)
	}
}

// Seed 002 §6.2: while a worker moves in and out of a nested group,
// concurrent acquires never hand it a task for the group while it is out.
// The state machine re-checks membership when it applies the assignment;
// this test checks what it can observe from outside soundly: an attempt
// whose whole span (from the time the leader stamped on it to the moment
// its acquire answered) lies after a removal answered and before the next
// addition was sent is a violation. The tail is checked exactly.
func TestSeed62ResolutionUnderChurn(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	workers := map[string]*client.Client{}
	for _, id := range []string{"m1", "flip", "outsider"} {
		_, workers[id] = enroll(t, h, id)
	}
	mustGroup(t, admin, "sub")
	mustGroup(t, admin, "pool", workerRef("m1"), groupRef("sub"))
	spec := execJob()
	spec.Count = 60
	spec.Target = &api.Target{Kind: api.TargetGroup, ID: "pool"}
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}

	type op struct {
		in             bool
		sent, answered time.Time
	}
	var ops []op
	var mu sync.Mutex
	answered := map[string]time.Time{} // attempt id → when its acquire answered
	churnDone := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(churnDone)
		for range 15 {
			for _, in := range []bool{true, false} {
				sent := time.Now()
				var err error
				if in {
					_, err = admin.AddGroupMember(ctx, "sub", workerRef("flip"))
				} else {
					_, err = admin.RemoveGroupMember(ctx, "sub", workerRef("flip"))
				}
				if err != nil {
					t.Errorf("churn: %v", err)
					return
				}
				ops = append(ops, op{in, sent, time.Now()})
			}
		}
	})
	for name, w := range workers {
		wg.Go(func() {
			for {
				final := false
				select {
				case <-churnDone:
					final = true
				default:
				}
				wait := 1
				if final {
					wait = 0
				}
				a, err := w.Acquire(ctx, api.AcquireRequest{WaitSeconds: wait})
				if err != nil {
					t.Errorf("%s acquire: %v", name, err)
					return
				}
				if a.Task == nil {
					if final {
						return
					}
					continue
				}
				mu.Lock()
				answered[a.Task.AttemptID] = time.Now()
				mu.Unlock()
				if _, err := w.Finish(ctx, a.Task.ID, api.FinishRequest{AttemptID: a.Task.AttemptID}); err != nil {
					t.Errorf("%s finish: %v", name, err)
					return
				}
			}
		})
	}
	wg.Wait()

	got, err := admin.Job(ctx, job.ID)
	if err != nil || got.State != api.TaskSucceeded {
		t.Fatalf("job after churn: %s %v", got.State, err)
	}
	counts := map[string]int{}
	for _, task := range got.Tasks {
		for _, a := range task.Attempts {
			counts[a.WorkerID]++
			if a.WorkerID == "outsider" {
				t.Fatalf("task %s went to the outsider", task.ID)
			}
			if a.WorkerID != "flip" {
				continue
			}
			stamped, err := api.ParseTime(a.AssignedAt)
			if err != nil {
				t.Fatal(err)
			}
			end := answered[a.AttemptID]
			for k, o := range ops {
				if o.in || o.answered.After(stamped) {
					continue
				}
				if k+1 == len(ops) || !ops[k+1].sent.Before(end) {
					t.Fatalf("task %s went to flip (stamped %s, answered %s) while flip was out of the group: removed at %s and not re-added before the answer",
						task.ID, a.AssignedAt, end.UTC().Format(api.TimeFormat), o.answered.UTC().Format(api.TimeFormat))
				}
			}
		}
	}
	t.Logf("attempts per worker: %v", counts)

	// The churn ended with flip out of the group: exactly, it gets nothing
	// for pool until it is back.
	spec.Count = 1
	tail, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"flip", "outsider"} {
		if a, err := workers[id].Acquire(ctx, api.AcquireRequest{}); err != nil || a.Task != nil {
			t.Fatalf("%s acquired %+v %v while out of the group", id, a.Task, err)
		}
	}
	if _, err := admin.AddGroupMember(ctx, "sub", workerRef("flip")); err != nil {
		t.Fatal(err)
	}
	if a := acquireOne(t, workers["flip"]); a.JobID != tail.ID {
		t.Fatalf("flip got %s, want a task of %s", a.JobID, tail.ID)
	}
}

// Seed 002 §6.3: attribution is data, kept after every terminal state and
// across a restart (log replay or snapshot).
func TestSeed63AttributionSurvivesTerminalStates(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok1, w1 := enroll(t, h, "w1")
	_, w2 := enroll(t, h, "w2")

	submitFor := func(worker string) api.Job {
		spec := execJob()
		spec.Target = &api.Target{Kind: api.TargetWorker, ID: worker}
		j, err := admin.SubmitJob(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	run := func(w *client.Client, code int) {
		a := acquireOne(t, w)
		if err := w.Start(ctx, a.ID, a.AttemptID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(ctx, a.ID, api.FinishRequest{AttemptID: a.AttemptID, SubmissionID: "s-" + a.AttemptID, ExitCode: code}); err != nil {
			t.Fatal(err)
		}
	}
	succeeded := submitFor("w1")
	run(w1, 0)
	failed := submitFor("w1")
	run(w1, 3)

	// A task whose first attempt could not run on w1 and then ran on w2.
	retried, err := admin.SubmitJob(ctx, execJob())
	if err != nil {
		t.Fatal(err)
	}
	a := acquireOne(t, w1)
	if _, err := w1.Fail(ctx, a.ID, api.FailRequest{AttemptID: a.AttemptID, Reason: "no such executor"}); err != nil {
		t.Fatal(err)
	}
	run(w2, 0)

	cancelled := submitFor("w2")
	c := acquireOne(t, w2)
	if err := w2.Start(ctx, c.ID, c.AttemptID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CancelJob(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Finish(ctx, c.ID, api.FinishRequest{AttemptID: c.AttemptID, ExitCode: 143}); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		job      string
		state    string
		executed string
		attempts []string
	}{
		{succeeded.ID, api.TaskSucceeded, "w1", []string{"w1"}},
		{failed.ID, api.TaskFailed, "w1", []string{"w1"}},
		{retried.ID, api.TaskSucceeded, "w2", []string{"w1", "w2"}},
		{cancelled.ID, api.TaskCancelled, "w2", []string{"w2"}},
	}
	check := func(when string, cl *client.Client) {
		for _, w := range want {
			j, err := cl.Job(ctx, w.job)
			if err != nil {
				t.Fatal(err)
			}
			task := j.Tasks[0]
			if j.CreatedBy != "admin" || task.State != w.state || task.ExecutedBy != w.executed || task.SubmittedBy != w.executed || len(task.Attempts) != len(w.attempts) {
				t.Errorf("%s: job %s: created_by=%s state=%s executed_by=%s submitted_by=%s attempts=%d, want %+v",
					when, w.job, j.CreatedBy, task.State, task.ExecutedBy, task.SubmittedBy, len(task.Attempts), w)
				continue
			}
			for i, a := range task.Attempts {
				if a.WorkerID != w.attempts[i] {
					t.Errorf("%s: job %s attempt %d by %s, want %s", when, w.job, i+1, a.WorkerID, w.attempts[i])
				}
			}
		}
	}
	check("before restart", admin)
	h = coordinatortest.Restart(t, h)
	check("after restart", h.Client(t, h.AdminToken))

	// The finish index survived too: the same submission replays.
	j, _ := h.Client(t, h.AdminToken).Job(ctx, succeeded.ID)
	att := j.Tasks[0].Attempts[0].AttemptID
	again := h.Client(t, tok1)
	task, err := again.Finish(ctx, j.Tasks[0].ID, api.FinishRequest{AttemptID: att, SubmissionID: "s-" + att})
	if err != nil || task.State != api.TaskSucceeded {
		t.Fatalf("replayed finish after restart: %+v %v", task, err)
	}
	if _, err := again.Finish(ctx, j.Tasks[0].ID, api.FinishRequest{AttemptID: att, SubmissionID: "s-" + att, ExitCode: 1}); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("other body under the same submission after restart: %v, want conflict", err)
	}
}

// Seed 002 §6.4: one credential, two independent clients. A claims, goes
// away; B, holding the same credential, finishes.
func TestSeed64CrossClientClaimWithOneCredential(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	token, _ := enroll(t, h, "eric")
	own := func() (*client.Client, *http.Transport) {
		tr := &http.Transport{}
		c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: token, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		return c, tr
	}
	a, trA := own()
	job, err := admin.SubmitJob(ctx, execJob())
	if err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, a)
	if err := a.Start(ctx, task.ID, task.AttemptID); err != nil {
		t.Fatal(err)
	}
	trA.CloseIdleConnections() // client A is gone

	b, _ := own()
	if err := b.AppendLogs(ctx, task.ID, api.LogsRequest{AttemptID: task.AttemptID, Stream: api.StreamStdout, Seq: 1, Data: "from b\n"}); err != nil {
		t.Fatal(err)
	}
	done, err := b.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, SubmissionID: "b-1"})
	if err != nil || done.State != api.TaskSucceeded || done.SubmittedBy != "eric" || done.ExecutedBy != "eric" {
		t.Fatalf("finish from the second client: %+v %v", done, err)
	}
	if j, _ := admin.Job(ctx, job.ID); j.State != api.TaskSucceeded {
		t.Fatalf("job %s", j.State)
	}
}

// Seed 002 §6.5: task writes need a worker credential, and the claimant's.
func TestSeed65AuthRequiredForTaskWrites(t *testing.T) {
	f := newFixture(t)
	h := f.h
	finish := []byte(`{"attempt_id":"` + f.heldAttempt + `","exit_code":0}`)
	start := []byte(`{"attempt_id":"` + f.heldAttempt + `"}`)
	logs := []byte(`{"attempt_id":"` + f.heldAttempt + `","stream":"stdout","seq":1,"data":"x"}`)
	fail := []byte(`{"attempt_id":"` + f.heldAttempt + `","reason":"x"}`)
	for _, verb := range []struct {
		name string
		body []byte
	}{{"finish", finish}, {"start", start}, {"logs", logs}, {"fail", fail}} {
		path := "/v1/tasks/" + f.heldTask + "/" + verb.name
		for _, c := range []struct {
			who    string
			token  string
			status int
			code   api.Code
		}{
			{"nobody", "", 401, api.CodeUnauthenticated},
			{"an admin", h.AdminToken, 403, api.CodeForbidden},
			{"a join token", h.JoinToken, 403, api.CodeForbidden},
			{"another worker", f.otherToken, 403, api.CodeWrongClaimant},
		} {
			before := snapshot(t, h)
			r := call(t, h.URL, "POST", path, c.token, verb.body, nil)
			if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
				t.Errorf("%s by %s: %d %s, want %d %s", verb.name, c.who, r.status, r.raw, c.status, c.code)
			}
			if !bytes.Equal(before, snapshot(t, h)) {
				t.Errorf("%s by %s changed the state", verb.name, c.who)
			}
		}
	}
	if r := call(t, h.URL, "POST", "/v1/tasks/"+f.heldTask+"/finish", f.workerToken, finish, nil); r.status != 200 {
		t.Fatalf("finish by the claimant: %d %s", r.status, r.raw)
	}
}

// Seed 002 §6.6: reissue during a claim. The old credential dies at once;
// the claim belongs to the worker, so the new credential finishes it.
func TestSeed66RotationDuringInFlightClaim(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	c1, w := enroll(t, h, "eric")
	if _, err := admin.SubmitJob(ctx, execJob()); err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, w)
	if err := w.Start(ctx, task.ID, task.AttemptID); err != nil {
		t.Fatal(err)
	}

	re, err := admin.ReissueWorker(ctx, "eric")
	if err != nil || re.WorkerID != "eric" || re.WorkerToken == "" || re.WorkerToken == c1 {
		t.Fatalf("reissue: %+v %v", re, err)
	}
	c2 := re.WorkerToken
	body := []byte(`{"attempt_id":"` + task.AttemptID + `","submission_id":"s1","exit_code":0}`)
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/tasks/" + task.ID + "/finish"},
		{"GET", "/v1/workers/self"},
		{"POST", "/v1/workers/self/heartbeat"},
	} {
		if r := call(t, h.URL, c.method, c.path, c1, body, nil); r.status != 401 || r.body.Error.Code != api.CodeUnauthenticated {
			t.Fatalf("%s %s with the old credential: %d %s, want 401", c.method, c.path, r.status, r.raw)
		}
	}
	next := h.Client(t, c2)
	if self, err := next.Self(ctx); err != nil || self.WorkerID != "eric" {
		t.Fatalf("self with the new credential: %+v %v", self, err)
	}
	r := call(t, h.URL, "POST", "/v1/tasks/"+task.ID+"/finish", c2, body, nil)
	if r.status != 200 || !bytes.Contains(r.raw, []byte(`"submitted_by":"eric"`)) {
		t.Fatalf("finish with the new credential: %d %s", r.status, r.raw)
	}
	if bytes.Contains(snapshot(t, h), []byte(c2[len(c2)-64:])) {
		t.Fatal("the state holds the new secret")
	}
}

// Seed 002 §6.7: the start-up probe answers for the worker the credential
// belongs to, so an agent can tell a credential of another worker from its
// own (the agent's reaction is tested in integration/identity_test.go).
func TestSeed67ProbeNamesTheCredentialsWorker(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tokA, _ := enroll(t, h, "worker-a")
	tokB, _ := enroll(t, h, "worker-b")
	for tok, want := range map[string]string{tokA: "worker-a", tokB: "worker-b"} {
		self, err := h.Client(t, tok).Self(ctx)
		if err != nil || self.WorkerID != want {
			t.Fatalf("self: %+v %v, want %s", self, err, want)
		}
	}
	if _, err := h.Client(t, h.AdminToken).Self(ctx); !client.IsCode(err, api.CodeForbidden) {
		t.Fatalf("self with an admin token: %v, want forbidden", err)
	}
	if _, err := admin.RevokeWorker(ctx, "worker-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client(t, tokB).Self(ctx); !client.IsCode(err, api.CodeWorkerRevoked) {
		t.Fatalf("self of a revoked worker: %v, want worker_revoked", err)
	}
}
