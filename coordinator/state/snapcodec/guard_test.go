package snapcodec

import (
	"bytes"
	"fmt"
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
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
	"github.com/gpulayer/gpulayer/internal/fieldguard"
)

// filledTables are tables holding two of every record the snapshot
// carries, each with every exported field filled (package fieldguard),
// and a remembered finish of each form: one that shares its task with
// the table (a finish record) and one that carries its own.
func filledTables(f *fieldguard.Filler) *Tables {
	c := &Tables{
		BootstrapGeneration: 1 + f.Rand().IntN(9),
		Seq:                 1 + f.Rand().Uint64N(1e6),
		AuditSeq:            1 + f.Rand().Uint64N(1e6),
		Nodes:               map[string]string{},
	}
	jobs, tasks := cow.New[*record.Job](), cow.New[*record.Task]()
	subs, idem := cow.New[*record.Submission](), cow.New[string]()
	for range 2 {
		c.Credentials = append(c.Credentials, *fieldguard.New[creds.Credential](f))
		w := fieldguard.New[record.Worker](f)
		c.Workers = append(c.Workers, *w)
		j := fieldguard.New[record.Job](f)
		jobs.Set(j.ID, j)
		c.JobOrder = append(c.JobOrder, j.ID)
		t := fieldguard.New[record.Task](f)
		tasks.Set(t.ID, t)
		subs.Set(t.ID+"/shared", &record.Submission{BodyHash: "h-" + t.ID, Task: t})
		own := fieldguard.New[record.Submission](f)
		subs.Set(own.Task.ID+"/own", own)
		idem.Set(*fieldguard.New[string](f), j.ID)
		c.Nodes[*fieldguard.New[string](f)] = *fieldguard.New[string](f)
		c.Groups = append(c.Groups, *fieldguard.New[groups.Group](f))
		c.Teams = append(c.Teams, *fieldguard.New[teams.Team](f))
		c.Usage = append(c.Usage, *fieldguard.New[usage.Row](f))
		c.UsageTotals = append(c.UsageTotals, *fieldguard.New[usage.Total](f))
		c.Clusters = append(c.Clusters, *fieldguard.New[enroll.Cluster](f))
		c.Enrollments = append(c.Enrollments, *fieldguard.New[enroll.Enrollment](f))
		c.Artifacts = append(c.Artifacts, *fieldguard.New[artifacts.Artifact](f))
		c.Audit = append(c.Audit, *fieldguard.New[command.AuditEvent](f))
		c.Refusals = append(c.Refusals, *fieldguard.New[command.AuditEvent](f))
	}
	c.Jobs, c.Tasks = jobs.Freeze(), tasks.Freeze()
	c.Submissions, c.Idempotency = subs.Freeze(), idem.Freeze()
	return c
}

// snapshotDiffs writes c as a snapshot, reads the records back and lists
// every record whose fields did not all come back.
func snapshotDiffs(t *testing.T, c *Tables) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, c); err != nil {
		t.Fatal(err)
	}
	snap, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	check := func(what, key string, want, got any) {
		if d := fieldguard.Diff(want, got); d != "" {
			bad = append(bad, fmt.Sprintf("%s %s: %s", what, key, d))
		}
	}
	if got := (Meta{snap.BootstrapGeneration, snap.Seq, snap.AuditSeq}); got != (Meta{c.BootstrapGeneration, c.Seq, c.AuditSeq}) {
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
	byKey("credential", anyOf(ptrs(c.Credentials)), anyOf(snap.Credentials), func(x any) string { return x.(*creds.Credential).ID })
	byKey("worker", anyOf(ptrs(c.Workers)), anyOf(snap.Workers), func(x any) string { return x.(*record.Worker).ID })
	byKey("job", anyOf(valuesOf(&c.Jobs)), anyOf(snap.Jobs), func(x any) string { return x.(*record.Job).ID })
	byKey("task", anyOf(valuesOf(&c.Tasks)), anyOf(snap.Tasks), func(x any) string { return x.(*record.Task).ID })
	byKey("group", anyOf(ptrs(c.Groups)), anyOf(snap.Groups), func(x any) string { return x.(*groups.Group).ID })
	byKey("usage", anyOf(ptrs(c.Usage)), anyOf(snap.Usage), func(x any) string { return fmt.Sprint(x.(*usage.Row).Key) })
	byKey("usage total", anyOf(ptrs(c.UsageTotals)), anyOf(snap.UsageTotals), func(x any) string { u := x.(*usage.Total); return u.Team + "/" + u.Model })
	byKey("team", anyOf(ptrs(c.Teams)), anyOf(snap.Teams), func(x any) string { return x.(*teams.Team).Name })
	byKey("cluster", anyOf(ptrs(c.Clusters)), anyOf(snap.Clusters), func(x any) string { return x.(*enroll.Cluster).Key })
	byKey("enrollment", anyOf(ptrs(c.Enrollments)), anyOf(snap.Enrollments), func(x any) string { return x.(*enroll.Enrollment).Key })
	byKey("artifact", anyOf(ptrs(c.Artifacts)), anyOf(snap.Artifacts), func(x any) string { return x.(*artifacts.Artifact).Digest })
	check("audit", "ring", c.Audit, snap.Audit)
	check("refusal", "ring", c.Refusals, snap.AuditRefusals)
	check("nodes", "table", c.Nodes, snap.Nodes)
	idem := map[string]string{}
	for k, v := range c.Idempotency.All() {
		idem[k] = v
	}
	check("idempotency", "table", idem, snap.Idempotency)
	for k, sub := range c.Submissions.All() {
		if f, ok := snap.Finishes[k]; ok {
			if f.BodyHash != sub.BodyHash || c.Tasks.Get(f.Task) != sub.Task {
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
	if n := len(snap.Finishes) + len(snap.Submissions); n != c.Submissions.Len() {
		bad = append(bad, fmt.Sprintf("submissions: %d written, %d read", c.Submissions.Len(), n))
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
		c := filledTables(fieldguard.NewFiller(uint64(seed)))
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
			kept := slices.DeleteFunc(slices.Clone(taskCodec.Fields()), func(f mprecord.Field[record.Task]) bool { return f.Name() == name })
			if len(kept) == len(taskCodec.Fields()) {
				t.Fatalf("the task codec has no field %q", name)
			}
			short := mprecord.New(kept...)
			x := fieldguard.New[record.Task](fieldguard.NewFiller(1))
			b, err := short.Append(mprecord.NewWriter(Handle()), nil, x)
			if err != nil {
				t.Fatal(err)
			}
			var back record.Task
			if err := codec.NewDecoderBytes(b, Handle()).Decode(&back); err != nil {
				t.Fatal(err)
			}
			d := fieldguard.Diff(x, &back)
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
	f := fieldguard.NewFiller(3)
	for _, x := range []any{fieldguard.New[record.Task](f), fieldguard.New[record.Job](f), fieldguard.New[record.Worker](f), fieldguard.New[creds.Credential](f),
		fieldguard.New[groups.Group](f), fieldguard.New[teams.Team](f), fieldguard.New[usage.Row](f), fieldguard.New[usage.Total](f), fieldguard.New[enroll.Cluster](f), fieldguard.New[enroll.Enrollment](f), fieldguard.New[artifacts.Artifact](f), fieldguard.New[command.AuditEvent](f)} {
		if zero := fieldguard.ZeroFields(x); len(zero) > 0 {
			t.Errorf("%T: fields left empty: %v", x, zero)
		}
	}
}
