package snapcodec

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Encode writes c as a snapshot (the current version). It changes
// nothing in c, so it may run while the store applies later commands, and
// more than once at a time. Output is deterministic.
func Encode(w io.Writer, c *Tables) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := encode(bw, c); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

func encode(w io.Writer, c *Tables) error {
	if _, err := io.WriteString(w, Magic+string(rune(Version))); err != nil {
		return err
	}
	s := newRecordStream(w)
	s.put(RecMeta, Meta{BootstrapGeneration: c.BootstrapGeneration, Seq: c.Seq, AuditSeq: c.AuditSeq})
	for _, x := range sortedBy(c.Credentials, func(x *creds.Credential) string { return x.ID }) {
		putRecord(s, RecCredential, credentialCodec, x)
	}
	for _, x := range sortedBy(c.Workers, func(x *record.Worker) string { return x.ID }) {
		putRecord(s, RecWorker, workerCodec, x)
	}
	for _, id := range c.JobOrder {
		putRecord(s, RecJob, jobCodec, c.Jobs.Get(id))
	}
	tasks := make([]*record.Task, 0, c.Tasks.Len())
	for _, t := range c.Tasks.All() {
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool {
		a, b := tasks[i], tasks[j]
		return a.Seq < b.Seq || (a.Seq == b.Seq && a.ID < b.ID) // ties only in a crafted snapshot
	})
	for _, x := range tasks {
		putRecord(s, RecTask, taskCodec, x)
	}
	for _, e := range c.Submissions.Sorted() {
		k, sub := e.Key, e.Value
		// The common case: the finish ended the task, which has not
		// changed since, so the table holds this very record. Pointer
		// identity decides, and a restore shares the record again where
		// the contents are equal (the state's load: Task.SameState): the store never holds
		// an unshared copy equal to the table's record, so both choose
		// alike and a restored state encodes to the same bytes. (A task
		// id has no slash, so the key splits at its first.)
		if t := sub.Task; t != nil && c.Tasks.Get(t.ID) == t {
			if tid, id, ok := strings.Cut(k, "/"); ok && tid == t.ID {
				s.putBody(RecFinish, appendFinish(s.body[:0], Finish{Task: t.ID, Submission: id, BodyHash: sub.BodyHash}))
				continue
			}
		}
		s.put(RecSubmission, SubmissionRecord{Key: k, Submission: *sub})
	}
	for _, e := range c.Idempotency.Sorted() {
		s.putBody(RecIdempotency, appendPair(s.body[:0], Pair{Key: e.Key, Value: e.Value}))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Nodes)) {
		s.put(RecNode, Pair{Key: k, Value: c.Nodes[k]})
	}
	for _, x := range sortedBy(c.Groups, func(x *groups.Group) string { return x.ID }) {
		s.put(RecGroup, x)
	}
	for _, x := range sortedBy(c.Teams, func(x *teams.Team) string { return x.Name }) {
		s.put(RecTeam, x)
	}
	rows := slices.SortedFunc(slices.Values(c.Usage), func(a, b usage.Row) int { return usage.CompareKeys(a.Key, b.Key) })
	for i := range rows {
		s.put(RecUsage, &rows[i])
	}
	totals := slices.SortedFunc(slices.Values(c.UsageTotals), func(a, b usage.Total) int {
		return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model))
	})
	for i := range totals {
		s.put(RecUsageTotal, &totals[i])
	}
	for _, x := range sortedBy(c.Clusters, func(x *enroll.Cluster) string { return x.Key }) {
		s.put(RecCluster, x)
	}
	for _, x := range sortedBy(c.Enrollments, func(x *enroll.Enrollment) string { return x.Key }) {
		s.put(RecEnrollment, x)
	}
	for _, x := range sortedBy(c.Artifacts, func(x *artifacts.Artifact) string { return x.Digest }) {
		s.put(RecArtifact, x)
	}
	for i := range c.Audit {
		putRecord(s, RecAudit, auditCodec, &c.Audit[i])
	}
	for i := range c.Refusals {
		putRecord(s, RecRefusal, auditCodec, &c.Refusals[i])
	}
	s.putBody(RecEnd, nil)
	return s.err
}

// recordStream writes a snapshot's records, each its kind, its length
// and its body, until the first error, which it keeps. Its body buffer is
// reused from one record to the next.
type recordStream struct {
	w    io.Writer
	body []byte
	enc  *codec.Encoder   // the small tables, through go-msgpack
	rw   *mprecord.Writer // the large ones, without reflection (records.go)
	head [1 + binary.MaxVarintLen64]byte
	err  error
}

func newRecordStream(w io.Writer) *recordStream {
	s := &recordStream{w: w, rw: mprecord.NewWriter(Handle())}
	s.enc = codec.NewEncoderBytes(&s.body, Handle())
	return s
}

// putBody writes one record whose body is b; the end record is its kind
// alone.
func (s *recordStream) putBody(kind uint8, b []byte) {
	if s.err != nil {
		return
	}
	s.body, s.head[0] = b, kind
	if kind == RecEnd {
		_, s.err = s.w.Write(s.head[:1])
		return
	}
	n := binary.PutUvarint(s.head[1:], uint64(len(b)))
	if _, s.err = s.w.Write(s.head[:1+n]); s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

// put writes v as go-msgpack encodes it.
func (s *recordStream) put(kind uint8, v any) {
	if s.err != nil {
		return
	}
	s.body = s.body[:0]
	s.enc.ResetBytes(&s.body)
	if s.err = s.enc.Encode(v); s.err == nil {
		s.putBody(kind, s.body)
	}
}

// putRecord writes x through its codec.
func putRecord[T any](s *recordStream, kind uint8, c *mprecord.Codec[T], x *T) {
	if s.err != nil {
		return
	}
	var b []byte
	if b, s.err = c.Append(s.rw, s.body[:0], x); s.err == nil {
		s.putBody(kind, b)
	}
}

// sortedBy returns pointers to list's elements, sorted by key.
func sortedBy[T any](list []T, key func(*T) string) []*T {
	out := make([]*T, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	slices.SortFunc(out, func(a, b *T) int { return strings.Compare(key(a), key(b)) })
	return out
}
