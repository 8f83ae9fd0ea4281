package faults

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/faultproxy"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Client ids in the history: agents take 0..agents-1, then these.
const (
	clientSubmitter = 10
	clientCanceller = 20
	clientReader    = 30
	clientDrain     = 31
	clientFinal     = 32
)

// outcomeOf is what one schedule did and found.
type outcomeOf struct {
	faults  map[string]int // faults applied, by kind
	skipped int            // faults not applied (no leader to aim at)
	jobs    int
	ops     int
	// violations: tasks whose history of requests is not linearizable
	// (the coordinators are wrong). callViolations: tasks whose requests
	// are linearizable but whose calls, as sdk/client's caller saw them,
	// are not: a call the client sent twice took effect twice, visibly.
	violations     []violation
	callViolations []violation
	// resent counts the calls answered after the client had sent them
	// again following an answer that left their outcome unknown.
	resent   int
	problems []string
	digest   string
	elapsed  time.Duration
	// stages: how long each part of the schedule took.
	stages string
	// recs, keyTask and final are the schedule's history, the task of
	// each job key, and the jobs as they ended, for tests of the checks.
	recs    []record
	events  []event
	keyTask map[string]string
	final   map[string]api.Job
	// done is what the check of done work found: runs that ended with 0
	// and were reported, and the ones whose work was discarded or ran
	// again, excused by the fault that explains it.
	done doneTally
	// seen counts what the schedule's faults led to, so that a report
	// shows they bit: final task states, lost attempts, attempts that held
	// a GPU, refusals the history got, outcomes left unknown.
	seen map[string]int
}

// tally counts what a schedule led to.
func tally(recs []record, final map[string]api.Job) map[string]int {
	n := map[string]int{}
	for _, j := range final {
		for _, t := range j.Tasks {
			n["task-"+t.State]++
			for _, a := range t.Attempts {
				n["attempts"]++
				if a.State == api.AttemptLost {
					n["attempts-lost"]++
				}
				if len(a.Devices) > 0 {
					n["attempts-on-gpu"]++
				}
			}
		}
	}
	for _, r := range recs {
		switch {
		case r.drop:
		case !r.ended || r.out.Unknown:
			n["unknown-outcome"]++
		case r.out.Code != "":
			n[string(r.out.Code)]++
		}
	}
	return n
}

// background releases the clusters of finished schedules while the next
// ones run, and keeps what went wrong meanwhile.
type background struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	late []string
}

func (b *background) release(tb *clusterTB) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		late := tb.release()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, l := range late {
			b.late = append(b.late, tb.Name()+": "+l)
		}
	}()
}

// wait waits for every release and returns the errors they reported.
func (b *background) wait() []string {
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.late
}

// jobBook maps the campaign's job keys to the jobs the cluster
// acknowledged.
type jobBook struct {
	mu  sync.Mutex
	ids map[string]string // key -> job id
}

func (b *jobBook) set(key, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ids[key] = id
}

func (b *jobBook) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.ids))
	for _, id := range b.ids {
		out = append(out, id)
	}
	return out
}

func (b *jobBook) keyTask() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.ids))
	for k, id := range b.ids {
		out[k] = id + "-0"
	}
	return out
}

// run is one schedule in progress.
type run struct {
	t      *testing.T
	tb     *clusterTB
	p      plan
	c      *coordinatortest.Cluster
	hc     *http.Client
	rec    *recorder
	urls   []string
	admin  *client.Client
	book   *jobBook
	agents []*simAgent

	mu      sync.Mutex
	applied map[string]int
	faulted map[*simAgent]bool // agents an agent fault took
	// agentLinks: each agent's fault proxies, one per coordinator, and
	// the fault they carry now; clients: the agents' HTTP clients; books:
	// the address books of every client's transport (the admin's first).
	agentLinks map[*simAgent][]*faultproxy.Proxy
	linkState  map[*simAgent]linkFault
	clients    []*http.Client
	books      map[*simAgent]*addrBook
	adminBook  *addrBook
	skipped    int
	problems   []string
	// fullDisk: when each node's disk was full, by node id.
	fullDisk map[string][][2]time.Time
	// removed: nodes taken out of the Raft configuration (a wiped disk),
	// stopped for good. clockStep: how far every coordinator's clock was
	// stepped by quorum losses; a node started again is stepped as far.
	removed   map[*coordinatortest.Node]bool
	clockStep time.Duration
	// waited: the attempts whose reports were kept while no quorum was
	// up, and their agents.
	waited map[string]*simAgent
}

// linkFault is the fault one agent's link proxies carry.
type linkFault struct {
	blocked bool
	delay   time.Duration
	drop    float64
}

func (lf linkFault) apply(px *faultproxy.Proxy) {
	px.SetBlocked(lf.blocked)
	px.SetDelay(lf.delay)
	px.SetDropRate(lf.drop)
}

func (r *run) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *run) count(k faultKind) { r.countName(k.String()) }

func (r *run) countName(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied[name]++
}

func newAdmin(urls []string, hc *http.Client, token string) (*client.Client, error) {
	return client.New(client.Config{Addrs: urls, Token: token, MaxRetryWait: 3 * time.Second, HTTPClient: hc})
}

// runSchedule runs one schedule: a cluster, its workers and clients, the
// planned faults, then healing, draining, and the checks.
func runSchedule(t *testing.T, p plan, bg *background) outcomeOf {
	began := time.Now()
	tb := &clusterTB{TB: t}
	t.Cleanup(func() { bg.release(tb) })
	// Each coordinator is a process of its own, so that it can be
	// SIGKILLed and its clock and disk misdriven.
	c := coordinatortest.StartCluster(tb, 3, coordinatortest.Options{Processes: true, Tweak: func(cfg *coordinator.Config) {
		cfg.HeartbeatInterval = heartbeatEvery
		// Re-armed leases get half a second on a new leader: workers
		// heartbeat ten times a second, so that is plenty, and lapses
		// come soon enough for a schedule of a few seconds.
		cfg.LeaseGrace = 500 * time.Millisecond
		// Snapshots every few dozen entries, so that compaction, and
		// nodes that come back behind the kept log catching up from a
		// snapshot, happen under the faults too.
		cfg.RaftSnapshotThreshold = 48
		cfg.RaftSnapshotInterval = 100 * time.Millisecond
	}})
	r := &run{t: t, tb: tb, p: p, c: c, rec: newRecorder(), urls: c.URLs(), book: &jobBook{ids: map[string]string{}}, applied: map[string]int{}, faulted: map[*simAgent]bool{},
		fullDisk: map[string][][2]time.Time{}, removed: map[*coordinatortest.Node]bool{}, waited: map[string]*simAgent{}, linkState: map[*simAgent]linkFault{}, books: map[*simAgent]*addrBook{}}
	names := map[string]string{}
	for _, n := range c.Nodes {
		names[n.HTTPAddr] = n.ID
	}
	r.adminBook = newAddrBook(names)
	hc := newTracer(r.rec, r.adminBook)
	r.hc = hc
	admin, err := newAdmin(r.urls, hc, c.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	r.admin = admin
	ctx := t.Context()
	r.agentLinks = map[*simAgent][]*faultproxy.Proxy{}
	for i := range p.Agents {
		// Each agent reaches every coordinator through a fault proxy of
		// its own, for the faults on its HTTP links.
		book := newAddrBook(names)
		var links []*faultproxy.Proxy
		for _, n := range c.Nodes {
			px, err := faultproxy.New(n.HTTPAddr)
			if err != nil {
				t.Fatal(err)
			}
			tb.Cleanup(func() { _ = px.Close() })
			book.add(n.HTTPAddr, n.ID, px.Addr())
			links = append(links, px)
		}
		ahc := newTracer(r.rec, book)
		r.clients = append(r.clients, ahc)
		a, err := newAgent(ctx, r.urls, ahc, c.JoinToken, fmt.Sprintf("w%d", i), i, r.rec)
		if err != nil {
			t.Fatal(err)
		}
		r.agents = append(r.agents, a)
		r.agentLinks[a] = links
		r.books[a] = book
	}
	defer func() {
		for _, a := range r.agents {
			a.stop()
		}
	}()

	// The fault phase: submitters, cancels, a reader, and the faults.
	phaseStart := time.Now()
	var stages []string
	stage := func(name string, since time.Time) time.Time {
		now := time.Now()
		stages = append(stages, fmt.Sprintf("%s %v", name, now.Sub(since).Round(time.Millisecond)))
		return now
	}
	mark := stage("start", began)
	readCtx, stopReading := context.WithCancel(ctx)
	var work, faults, reading sync.WaitGroup
	for s := range 2 {
		work.Add(1)
		go func() { defer work.Done(); r.submit(ctx, s, 2, phaseStart, &work) }()
	}
	reading.Add(1)
	go func() { defer reading.Done(); r.read(readCtx, p.Seed) }()
	uploads := &acked{bytes: map[string][]byte{}}
	reading.Add(1)
	go func() { defer reading.Done(); r.upload(readCtx, p.Seed, uploads) }()
	var linkFaults, agentFaults []fault
	for _, f := range p.Faults {
		if f.Kind.onAgent() {
			agentFaults = append(agentFaults, f)
		} else {
			linkFaults = append(linkFaults, f)
		}
	}
	faults.Add(1)
	go func() { defer faults.Done(); r.coordinatorFaults(phaseStart, linkFaults) }()
	for _, f := range agentFaults {
		faults.Add(1)
		go func() { defer faults.Done(); r.agentFault(phaseStart, f) }()
	}
	faults.Wait()
	// Healed: every link restored and every node running (each fault
	// undoes itself when its time is up); paused agents resumed.
	c.Heal()
	for _, n := range r.members() {
		if !n.Running() {
			r.restartNode(n)
		}
	}
	mark = stage("faults", mark)
	work.Wait()
	mark = stage("submits", mark)

	// Drain: every acknowledged job must end.
	ids := r.book.list()
	r.drain(ctx, ids)
	stopReading()
	reading.Wait()
	for _, a := range r.agents {
		a.stop()
	}
	mark = stage("drain", mark)

	snap := c.Converged(30 * time.Second)
	for _, n := range r.members() {
		if !n.Running() {
			r.problem("node %s is not running after healing", n.ID)
		}
	}
	r.checkExits()
	sum := sha256.Sum256(snap)
	artifacts := r.checkArtifacts(ctx, uploads)

	final := r.finalViews(ctx, ids)
	recs := r.rec.snapshot()
	h := buildHistory(recs, r.book.keyTask(), byRequest)
	for _, u := range h.unexpected {
		r.problem("unexpected refusal: %s", u)
	}
	viol := checkLinearizable(h, 20*time.Second)
	bad := map[string]bool{}
	for _, v := range viol {
		bad[v.task] = true
	}
	var callViol []violation
	for _, v := range checkLinearizable(buildHistory(recs, r.book.keyTask(), byCall), 20*time.Second) {
		if !bad[v.task] {
			callViol = append(callViol, v)
		}
	}
	r.problems = append(r.problems, checkInvariants(recs, final, r.applied[faultClockStep.String()] > 0)...)
	events := r.rec.eventsSnapshot()
	donePr, done := checkDoneWork(recs, events)
	r.problems = append(r.problems, donePr...)
	r.problems = append(r.problems, checkSuperseded(recs)...)
	stage("check", mark)
	// A connection a client opened and never used keeps an HTTP server's
	// graceful stop waiting for up to 5 s: close this side's.
	hc.CloseIdleConnections()
	for _, ahc := range r.clients {
		ahc.CloseIdleConnections()
	}
	seen := tally(recs, final)
	seen["artifacts-acknowledged"] = artifacts
	for att, a := range r.waited {
		// How the reports kept during a quorum loss were settled.
		seen["outage-report-"+cmp.Or(a.verdict(att), "unsettled")]++
	}
	return outcomeOf{recs: recs, events: events, done: done, keyTask: r.book.keyTask(), final: final, seen: seen, stages: strings.Join(stages, ", "), faults: r.applied, skipped: r.skipped, jobs: len(ids), ops: h.ops, violations: viol, callViolations: callViol, resent: len(h.resent), problems: r.problems, digest: fmt.Sprintf("%x", sum[:8]), elapsed: time.Since(began)}
}

// submit submits every stride-th planned job from first on, each at its
// planned time, resending under its idempotency key until acknowledged.
func (r *run) submit(ctx context.Context, first, stride int, start time.Time, work *sync.WaitGroup) {
	for i := first; i < len(r.p.Jobs); i += stride {
		j := r.p.Jobs[i]
		if d := time.Until(start.Add(j.At)); d > 0 {
			select {
			case <-time.After(d): // the schedule's submission time
			case <-ctx.Done():
				return
			}
		}
		spec := api.JobSpec{Name: j.Key, Executor: simExecutor, Config: j.config(), LeaseSeconds: j.Lease, MaxAttempts: j.MaxAttempts, IdempotencyKey: j.Key}
		if j.GPUs > 0 {
			spec.Resources = &api.Resources{GPUs: j.GPUs}
		}
		deadline := time.Now().Add(40 * time.Second)
		var job api.Job
		for {
			rec := r.rec.begin(clientSubmitter+first, opInput{Kind: opCreate, Key: j.Key, MaxAttempts: j.MaxAttempts})
			cctx, cancel := context.WithTimeout(withRecord(ctx, rec), callTimeout)
			got, err := r.admin.SubmitJob(cctx, spec)
			cancel()
			out, unexpected := outcome(err)
			if err == nil && len(got.Tasks) == 1 {
				out.View = observe(got.State, got.Tasks[0])
			} else if err == nil {
				out, unexpected = opOutput{Unknown: true}, fmt.Sprintf("job with %d tasks", len(got.Tasks))
			} else if !out.Unknown {
				// A definite refusal of a submit is not part of the
				// workload: the harness or the coordinator is wrong.
				out, unexpected = opOutput{Unknown: true}, err.Error()
			}
			r.rec.update(rec, func(x *record) { x.err = unexpected })
			r.rec.end(rec, out)
			if !out.Unknown {
				job = got
				break
			}
			if time.Now().After(deadline) {
				r.problem("submit %s never acknowledged within 40 s: %v", j.Key, err)
				return
			}
			select {
			case <-time.After(retryPause):
			case <-ctx.Done():
				return
			}
		}
		r.book.set(j.Key, job.ID)
		if j.CancelAfter >= 0 {
			work.Add(1)
			go func() { defer work.Done(); r.cancel(ctx, job.ID, j.CancelAfter) }()
		}
	}
}

// cancel cancels a job after a delay; a cancel whose outcome is unknown is
// sent again, up to three times.
func (r *run) cancel(ctx context.Context, jobID string, after time.Duration) {
	select {
	case <-time.After(after): // the schedule's cancel time
	case <-ctx.Done():
		return
	}
	for range 3 {
		rec := r.rec.begin(clientCanceller, opInput{Kind: opCancel, Task: jobID + "-0"})
		cctx, cancel := context.WithTimeout(withRecord(ctx, rec), callTimeout)
		j, err := r.admin.CancelJob(cctx, jobID)
		cancel()
		out, unexpected := outcome(err)
		if err == nil && len(j.Tasks) == 1 {
			out.View = observe(j.State, j.Tasks[0])
		}
		r.rec.update(rec, func(x *record) { x.err = unexpected })
		r.rec.end(rec, out)
		if !out.Unknown {
			return
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return
		}
	}
}

// readJob reads a job and records it.
func (r *run) readJob(ctx context.Context, clientID int, jobID string) (api.Job, error) {
	rec := r.rec.begin(clientID, opInput{Kind: opRead, Task: jobID + "-0"})
	cctx, cancel := context.WithTimeout(withRecord(ctx, rec), callTimeout)
	j, err := r.admin.Job(cctx, jobID)
	cancel()
	out, unexpected := outcome(err)
	if err == nil {
		if len(j.Tasks) == 1 {
			out.View = observe(j.State, j.Tasks[0])
		} else {
			out, unexpected = opOutput{Unknown: true}, fmt.Sprintf("job with %d tasks", len(j.Tasks))
		}
	}
	r.rec.update(rec, func(x *record) { x.err = unexpected })
	r.rec.end(rec, out)
	return j, err
}

// read reads acknowledged jobs at random until told to stop.
func (r *run) read(ctx context.Context, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		if ids := r.book.list(); len(ids) > 0 {
			_, _ = r.readJob(ctx, clientReader, ids[rng.IntN(len(ids))])
		}
		select {
		case <-time.After(25 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// drain waits until every acknowledged job has ended.
func (r *run) drain(ctx context.Context, ids []string) {
	open := map[string]bool{}
	for _, id := range ids {
		open[id] = true
	}
	// Leases are 1 or 2 s, re-armed with half a second of grace on a new
	// leader: 20 s is ample.
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := map[string]api.Job{}
	for len(open) > 0 {
		for id := range open {
			j, err := r.readJob(ctx, clientDrain, id)
			if err == nil {
				last[id] = j
				if terminal(j.State) {
					delete(open, id)
				}
			}
		}
		if len(open) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for id := range open {
				r.problem("acknowledged job %s never ended within 20 s of healing: %s%s\n%s", id, describeJob(last[id]), r.ghostHint(last[id]), r.taskLog(id+"-0"))
			}
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// ghostHint explains a task left assigned to an attempt that no acquire
// call was answered with.
func (r *run) ghostHint(j api.Job) string {
	if len(j.Tasks) != 1 || len(j.Tasks[0].Attempts) == 0 {
		return ""
	}
	t := j.Tasks[0]
	cur := t.Attempts[len(t.Attempts)-1]
	if cur.EndedAt != "" {
		return ""
	}
	for _, rec := range r.rec.snapshot() {
		if rec.in.Kind == opAcquire && rec.in.Attempt == cur.AttemptID {
			return ""
		}
	}
	return fmt.Sprintf("\n  attempt #%d (%s on %s) was never the answer to an acquire: the call that made it ended before its commit "+
		"(the worker crashed or gave up); does the leader arm a lease for such an attempt? (see TestCommittedAssignmentWithoutAnswerLapses)", cur.Number, cur.AttemptID, cur.WorkerID)
}

// taskLog renders every record of one task, for a report on a task that
// never ended, with what the agent faults did.
func (r *run) taskLog(task string) string {
	var b strings.Builder
	r.mu.Lock()
	for a := range r.faulted {
		fmt.Fprintf(&b, "  agent %s was paused or crashed (crashed: %v)\n", a.id, a.wasKilled())
	}
	r.mu.Unlock()
	for _, rec := range r.rec.snapshot() {
		if rec.in.Task != task || rec.in.Kind == opRead {
			continue
		}
		ret := ms(rec.ret)
		if !rec.ended {
			ret = "(no answer)"
		}
		fmt.Fprintf(&b, "  [%s .. %s] %s\n      sent: %s\n", ms(rec.call), ret, describe(rec.in, rec.out), rec.trace())
	}
	return b.String()
}

// finalViews reads every acknowledged job once the nodes have converged.
func (r *run) finalViews(ctx context.Context, ids []string) map[string]api.Job {
	out := map[string]api.Job{}
	for _, id := range ids {
		j, err := r.readJob(ctx, clientFinal, id)
		if err != nil {
			r.problem("final read of %s: %v", id, err)
			continue
		}
		out[id] = j
	}
	return out
}

func terminal(state string) bool {
	return state == api.TaskSucceeded || state == api.TaskFailed || state == api.TaskCancelled
}

func describeJob(j api.Job) string {
	if len(j.Tasks) == 0 {
		return "(not read)"
	}
	var b strings.Builder
	t := j.Tasks[0]
	fmt.Fprintf(&b, "%s, task %s", j.State, t.State)
	for _, a := range t.Attempts {
		fmt.Fprintf(&b, "; #%d %s on %s assigned %s ended %q %s", a.Number, a.State, a.WorkerID, a.AssignedAt, a.EndedAt, a.Reason)
	}
	return b.String()
}

// hold waits out a fault's planned duration.
func hold(d time.Duration) { <-time.After(d) }

// until waits for a point of the schedule.
func until(t time.Time) {
	if d := time.Until(t); d > 0 {
		<-time.After(d)
	}
}

// leader waits up to a second for a node that leads.
func (r *run) leader() *coordinatortest.Node {
	deadline := time.Now().Add(time.Second)
	for {
		if l := r.c.Leader(); l != nil {
			return l
		}
		if time.Now().After(deadline) {
			return nil
		}
		<-time.After(10 * time.Millisecond)
	}
}

// followers lists the members other than l.
func (r *run) followers(l *coordinatortest.Node) []*coordinatortest.Node {
	var out []*coordinatortest.Node
	for _, n := range r.members() {
		if n != l {
			out = append(out, n)
		}
	}
	return out
}

// members lists the nodes of the Raft configuration: every node but those
// removed (a wiped disk's), the new member in their place included.
func (r *run) members() []*coordinatortest.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*coordinatortest.Node
	for _, n := range r.c.Nodes {
		if !r.removed[n] {
			out = append(out, n)
		}
	}
	return out
}

// agentFault pauses or crashes an agent: the first, from the planned
// one on, that is running a task (waiting up to a second and a half for
// one to), and never one an earlier agent fault took.
func (r *run) agentFault(start time.Time, f fault) {
	until(start.Add(f.At))
	pick := func() *simAgent {
		r.mu.Lock()
		defer r.mu.Unlock()
		var free *simAgent
		for i := range r.agents {
			a := r.agents[(f.Pick+i)%len(r.agents)]
			if r.faulted[a] {
				continue
			}
			if free == nil {
				free = a
			}
			if a.midway() {
				r.faulted[a] = true
				return a
			}
		}
		if free != nil && time.Now().After(start.Add(f.At+1500*time.Millisecond)) {
			r.faulted[free] = true
			return free
		}
		return nil
	}
	var a *simAgent
	for a = pick(); a == nil; a = pick() {
		<-time.After(5 * time.Millisecond)
	}
	r.count(f.Kind)
	switch f.Kind {
	case faultPauseAgent:
		atts := a.midwayAttempts()
		a.pause()
		r.t.Logf("paused %s at %s ms, running %v", a.id, ms(r.rec.now()), atts)
		hold(f.For)
		late := f.ThawAfterRetry && r.thawAfterRetry(a, atts)
		a.resume()
		r.t.Logf("resumed %s at %s ms", a.id, ms(r.rec.now()))
		if late {
			r.checkLateReports(a, atts)
		}
	case faultCrashAgent:
		r.t.Logf("crashed %s at %s ms", a.id, ms(r.rec.now()))
		a.kill()
	case faultCutAgentLinks, faultDelayAgentLinks, faultDropAgentLinks:
		var lf linkFault
		switch f.Kind {
		case faultCutAgentLinks:
			lf.blocked = true
			a.rec.note(event{kind: evCutOn, worker: a.id})
		case faultDelayAgentLinks:
			lf.delay = f.Delay
		case faultDropAgentLinks:
			lf.drop = f.Drop
		}
		r.setLinks(a, lf)
		r.t.Logf("%s of %s at %s ms", f.Kind, a.id, ms(r.rec.now()))
		hold(f.For)
		r.setLinks(a, linkFault{})
		if f.Kind == faultCutAgentLinks {
			a.rec.note(event{kind: evCutOff, worker: a.id})
		}
		r.t.Logf("healed the links of %s at %s ms", a.id, ms(r.rec.now()))
	}
}

// setLinks puts a fault on every link of an agent (none: healed), and
// on any link it gets later.
func (r *run) setLinks(a *simAgent, lf linkFault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.linkState[a] = lf
	for _, px := range r.agentLinks[a] {
		lf.apply(px)
	}
}

// thawAfterRetry keeps a frozen agent frozen until the task of every
// attempt it was running has ended, or has another attempt that ended:
// the retries of its lost attempts finished elsewhere (or the tasks were
// cancelled), for up to 8 s more. It reports whether they did.
func (r *run) thawAfterRetry(a *simAgent, atts map[string]string) bool {
	if len(atts) == 0 {
		return false
	}
	deadline := time.Now().Add(8 * time.Second)
	for !r.retriesEnded(atts) {
		if time.Now().After(deadline) {
			r.t.Logf("%s: the retries of %v had not ended 8 s after the freeze's planned end; thawed", a.id, atts)
			return false
		}
		<-time.After(50 * time.Millisecond)
	}
	r.countName(countThawAfterRetry)
	r.t.Logf("%s: the retries of %v ended elsewhere at %s ms", a.id, atts, ms(r.rec.now()))
	return true
}

// checkLateReports follows the reports a thawed agent keeps and sends for
// the attempts it held when it froze, whose retries ended elsewhere: each
// is late, and must be refused for good (stale_attempt, say), never
// accepted. (checkSuperseded checks the same of the history; this is the
// agent's side: its verdict.)
func (r *run) checkLateReports(a *simAgent, atts map[string]string) {
	deadline := time.Now().Add(10 * time.Second)
	for att := range atts {
		for a.holds(att) && a.verdict(att) == "" && time.Now().Before(deadline) {
			<-time.After(20 * time.Millisecond)
		}
		switch v := a.verdict(att); v {
		case "accepted":
			r.problem("agent %s, frozen past its lease and thawed after the retry of its attempt %s ended elsewhere: its late report was accepted", a.id, att)
		case "":
		default:
			r.countName(countLateRefused)
		}
	}
}

// retriesEnded reports whether the task of every attempt in atts has
// ended, or has a later attempt that ended. Its reads are not recorded.
func (r *run) retriesEnded(atts map[string]string) bool {
	for att, task := range atts {
		ctx, cancel := context.WithTimeout(r.t.Context(), time.Second)
		j, err := r.admin.Job(ctx, jobOf(task))
		cancel()
		if err != nil || len(j.Tasks) != 1 {
			return false
		}
		t := j.Tasks[0]
		if terminal(t.State) {
			continue
		}
		i := slices.IndexFunc(t.Attempts, func(x api.Attempt) bool { return x.AttemptID == att })
		if i < 0 || !slices.ContainsFunc(t.Attempts[i+1:], func(x api.Attempt) bool { return x.EndedAt != "" }) {
			return false
		}
	}
	return true
}
