package state

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// filledCapture is a capture holding two of every record the snapshot
// carries, each with every exported field filled (fieldguard_test.go),
// and a remembered finish of each form: one that shares its task with
// the table (a finish record) and one that carries its own.
func filledCapture(f *filler) *Capture {
	c := &Capture{
		bootstrapGeneration: 1 + f.rng.IntN(9),
		seq:                 1 + f.rng.Uint64N(1e6),
		auditSeq:            1 + f.rng.Uint64N(1e6),
		nodes:               map[string]string{},
	}
	jobs, tasks := cow.New[*Job](), cow.New[*Task]()
	subs, idem := cow.New[*Submission](), cow.New[string]()
	for range 2 {
		c.credentials = append(c.credentials, *fillNew[creds.Credential](f))
		w := fillNew[Worker](f)
		c.workers = append(c.workers, *w)
		j := fillNew[Job](f)
		jobs.Set(j.ID, j)
		c.jobOrder = append(c.jobOrder, j.ID)
		t := fillNew[Task](f)
		tasks.Set(t.ID, t)
		subs.Set(t.ID+"/shared", &Submission{BodyHash: "h-" + t.ID, Task: t})
		own := fillNew[Submission](f)
		subs.Set(own.Task.ID+"/own", own)
		idem.Set(*fillNew[string](f), j.ID)
		c.nodes[*fillNew[string](f)] = *fillNew[string](f)
		c.groups = append(c.groups, *fillNew[groups.Group](f))
		c.teams = append(c.teams, *fillNew[teams.Team](f))
		c.usage = append(c.usage, *fillNew[usage.Row](f))
		c.usageTotals = append(c.usageTotals, *fillNew[usage.Total](f))
		c.clusters = append(c.clusters, *fillNew[enroll.Cluster](f))
		c.enrollments = append(c.enrollments, *fillNew[enroll.Enrollment](f))
		c.artifacts = append(c.artifacts, *fillNew[artifacts.Artifact](f))
		c.audit = append(c.audit, *fillNew[command.AuditEvent](f))
		c.refusals = append(c.refusals, *fillNew[command.AuditEvent](f))
	}
	c.jobs, c.tasks = jobs.Freeze(), tasks.Freeze()
	c.submissions, c.idempotency = subs.Freeze(), idem.Freeze()
	return c
}

// snapshotDiffs writes c as a snapshot, reads the records back and lists
// every record whose fields did not all come back.
func snapshotDiffs(t *testing.T, c *Capture) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	snap := decodeSnapshot(t, buf.Bytes())
	var bad []string
	check := func(what, key string, want, got any) {
		if d := fieldDiff(want, got); d != "" {
			bad = append(bad, fmt.Sprintf("%s %s: %s", what, key, d))
		}
	}
	if got := (snapMeta{snap.BootstrapGeneration, snap.Seq, snap.AuditSeq}); got != (snapMeta{c.bootstrapGeneration, c.seq, c.auditSeq}) {
		bad = append(bad, fmt.Sprintf("meta: %+v", got))
	}
	byKey := func(what string, want []any, got []any, key func(any) string) {
		if len(want) != len(got) {
			bad = append(bad, fmt.Sprintf("%s: %d records written, %d read", what, len(want), len(got)))
			return
		}
		slices.SortFunc(want, func(a, b any) int { return strings.Compare(key(a), key(b)) })
		slices.SortFunc(got, func(a, b any) int { return strings.Compare(key(a), key(b)) })
		for i := range want {
			check(what, key(want[i]), want[i], got[i])
		}
	}
	byKey("credential", anyOf(ptrs(c.credentials)), anyOf(snap.Credentials), func(x any) string { return x.(*creds.Credential).ID })
	byKey("worker", anyOf(ptrs(c.workers)), anyOf(snap.Workers), func(x any) string { return x.(*Worker).ID })
	byKey("job", anyOf(valuesOf(&c.jobs)), anyOf(snap.Jobs), func(x any) string { return x.(*Job).ID })
	byKey("task", anyOf(valuesOf(&c.tasks)), anyOf(snap.Tasks), func(x any) string { return x.(*Task).ID })
	byKey("group", anyOf(ptrs(c.groups)), anyOf(snap.Groups), func(x any) string { return x.(*groups.Group).ID })
	byKey("usage", anyOf(ptrs(c.usage)), anyOf(snap.Usage), func(x any) string { return fmt.Sprint(x.(*usage.Row).Key) })
	byKey("usage total", anyOf(ptrs(c.usageTotals)), anyOf(snap.UsageTotals), func(x any) string { u := x.(*usage.Total); return u.Team + "/" + u.Model })
	byKey("team", anyOf(ptrs(c.teams)), anyOf(snap.Teams), func(x any) string { return x.(*teams.Team).Name })
	byKey("cluster", anyOf(ptrs(c.clusters)), anyOf(snap.Clusters), func(x any) string { return x.(*enroll.Cluster).Key })
	byKey("enrollment", anyOf(ptrs(c.enrollments)), anyOf(snap.Enrollments), func(x any) string { return x.(*enroll.Enrollment).Key })
	byKey("artifact", anyOf(ptrs(c.artifacts)), anyOf(snap.Artifacts), func(x any) string { return x.(*artifacts.Artifact).Digest })
	check("audit", "ring", c.audit, snap.Audit)
	check("refusal", "ring", c.refusals, snap.AuditRefusals)
	check("nodes", "table", c.nodes, snap.Nodes)
	idem := map[string]string{}
	for k, v := range c.idempotency.All() {
		idem[k] = v
	}
	check("idempotency", "table", idem, snap.Idempotency)
	for k, sub := range c.submissions.All() {
		if f, ok := snap.finishes[k]; ok {
			if f.BodyHash != sub.BodyHash || c.tasks.Get(f.Task) != sub.Task {
				bad = append(bad, fmt.Sprintf("finish %s: read as %+v", k, f))
			}
			continue
		}
		got, ok := snap.Submissions[k]
		if !ok {
			bad = append(bad, fmt.Sprintf("submission %s: not read back", k))
			continue
		}
		check("submission", k, *sub, got)
	}
	if n := len(snap.finishes) + len(snap.Submissions); n != c.submissions.Len() {
		bad = append(bad, fmt.Sprintf("submissions: %d written, %d read", c.submissions.Len(), n))
	}
	return bad
}

func ptrs[T any](xs []T) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

func valuesOf[V any](m *cow.Frozen[V]) []V {
	var out []V
	for _, v := range m.All() {
		out = append(out, v)
	}
	return out
}

func anyOf[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// Every exported field of every record the snapshot carries comes back
// from a snapshot as it went in. The records are filled by reflection, so
// a field added to any of them (or to a type they hold, sdk/api's
// included) is filled too, and fails here until the codec carries it.
func TestEveryFieldSurvivesASnapshot(t *testing.T) {
	for seed := range 40 {
		c := filledCapture(newFiller(uint64(seed)))
		if bad := snapshotDiffs(t, c); len(bad) > 0 {
			t.Fatalf("seed %d: fields lost or changed by a snapshot round trip:\n  %s", seed, strings.Join(bad, "\n  "))
		}
	}
}

// The guard catches a field the codec does not carry: the task codec,
// less one field, loses it, and fieldDiff names it. (This is the mistake
// the guard exists for: a field added to a record and not to its codec.)
func TestFieldGuardCatchesAFieldTheCodecDropped(t *testing.T) {
	for _, name := range []string{"reason", "log_cut", "attempts", "lease_expires_at"} {
		t.Run(name, func(t *testing.T) {
			kept := slices.DeleteFunc(slices.Clone(taskCodec.Fields()), func(f mprecord.Field[Task]) bool { return f.Name() == name })
			if len(kept) == len(taskCodec.Fields()) {
				t.Fatalf("the task codec has no field %q", name)
			}
			short := mprecord.New(kept...)
			x := fillNew[Task](newFiller(1))
			b, err := short.Append(mprecord.NewWriter(msgpackHandle()), nil, x)
			if err != nil {
				t.Fatal(err)
			}
			var back Task
			if err := codec.NewDecoderBytes(b, msgpackHandle()).Decode(&back); err != nil {
				t.Fatal(err)
			}
			d := fieldDiff(x, &back)
			if d == "" {
				t.Fatalf("a task written without %q compared equal: the guard is blind", name)
			}
			t.Logf("caught: %s", d)
		})
	}
}

// The filler leaves no exported field empty, so the guard above cannot
// pass by comparing zero with zero.
func TestFillerFillsEveryField(t *testing.T) {
	f := newFiller(3)
	for _, x := range []any{fillNew[Task](f), fillNew[Job](f), fillNew[Worker](f), fillNew[creds.Credential](f),
		fillNew[groups.Group](f), fillNew[teams.Team](f), fillNew[usage.Row](f), fillNew[usage.Total](f), fillNew[enroll.Cluster](f), fillNew[enroll.Enrollment](f), fillNew[artifacts.Artifact](f), fillNew[command.AuditEvent](f)} {
		if zero := zeroFields("", reflect.ValueOf(x)); len(zero) > 0 {
			t.Errorf("%T: fields left empty: %v", x, zero)
		}
	}
}
