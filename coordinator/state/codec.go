package state

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// A snapshot (format version 3) is a fixed header, the magic then one
// version byte, followed by a stream of records. Each record is its kind
// (one byte), the length of its body (an unsigned varint) and the body:
// one MessagePack value, field names as in the JSON form. The first record
// is the meta record; the last is recEnd, a kind byte alone, after which
// nothing may follow. Records are written and read one at a time, so
// neither side holds the whole encoding; a body is decoded from its own
// bytes, so a length a hostile snapshot claims inside one can make the
// decoder allocate no more than the body it actually sent.
//
// Version 3 added the finish record (recFinish): a remembered finish whose
// task is, still, the table's record names that task instead of carrying
// a second copy of it. Version 2 snapshots, without it, and version 1
// snapshots, one JSON document, are still read (Restore).
const (
	snapshotMagic   = "GPLSNAP"
	snapshotVersion = 3
	// oldestRecords is the oldest version written in records.
	oldestRecords = 2
)

// Record kinds. Numbers are part of the format: never reuse one.
const (
	recEnd uint8 = iota
	recMeta
	recCredential
	recWorker
	recJob
	recTask
	recLog // task output, before it left the store: never written, refused
	recSubmission
	recIdempotency
	recNode
	recGroup
	recCluster
	recEnrollment
	recArtifact
	recAudit
	recRefusal
	recFinish // version 3 on
	recTeam
	recUsage
	recUsageTotal
)

// snapMeta is the store's scalar state.
type snapMeta struct {
	BootstrapGeneration int    `json:"bootstrap_generation"`
	Seq                 uint64 `json:"seq"`
	AuditSeq            uint64 `json:"audit_seq"`
}

// snapSubmission is one remembered finish.
type snapSubmission struct {
	Key        string     `json:"key"`
	Submission Submission `json:"submission"`
}

// snapFinish is one remembered finish whose task is the table's record,
// as the finish left it: the task is named, not copied. Its key is
// submissionKey(Task, Submission).
type snapFinish struct {
	Task       string `json:"task"`
	Submission string `json:"submission"`
	BodyHash   string `json:"body_hash"`
}

// snapPair is one entry of a string to string table.
type snapPair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// maxRecordBytes bounds one record's body. The largest record is a task
// with its finish's output.
const maxRecordBytes = 64 << 20

func msgpackHandle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true                  // binary as bin, times as the timestamp extension
	h.Canonical = true                 // map keys sorted: the same state, the same bytes
	h.MaxInitLen = mprecord.MaxInitLen // a hostile snapshot cannot make it reserve more than it sends
	return h
}

// Encode writes the capture as a snapshot (the current version). It takes no lock,
// may run while the store applies later commands and changes nothing in
// the capture (it may run more than once, concurrently). Output is
// deterministic.
func (c *Capture) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := c.encode(bw); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

func (c *Capture) encode(w io.Writer) error {
	if _, err := io.WriteString(w, snapshotMagic+string(rune(snapshotVersion))); err != nil {
		return err
	}
	s := newRecordStream(w)
	s.put(recMeta, snapMeta{BootstrapGeneration: c.bootstrapGeneration, Seq: c.seq, AuditSeq: c.auditSeq})
	for _, x := range sortedBy(c.credentials, func(x *creds.Credential) string { return x.ID }) {
		putRecord(s, recCredential, credentialCodec, x)
	}
	for _, x := range sortedBy(c.workers, func(x *Worker) string { return x.ID }) {
		putRecord(s, recWorker, workerCodec, x)
	}
	for _, id := range c.jobOrder {
		putRecord(s, recJob, jobCodec, c.jobs.Get(id))
	}
	tasks := make([]*Task, 0, c.tasks.Len())
	for _, t := range c.tasks.All() {
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool {
		a, b := tasks[i], tasks[j]
		return a.Seq < b.Seq || (a.Seq == b.Seq && a.ID < b.ID) // ties only in a crafted snapshot
	})
	for _, x := range tasks {
		putRecord(s, recTask, taskCodec, x)
	}
	for _, e := range c.submissions.Sorted() {
		k, sub := e.Key, e.Value
		// The common case: the finish ended the task, which has not
		// changed since, so the table holds this very record. Pointer
		// identity decides, and a restore shares the record again where
		// the contents are equal (load: Task.SameState): the store never holds
		// an unshared copy equal to the table's record, so both choose
		// alike and a restored state encodes to the same bytes. (A task
		// id has no slash, so the key splits at its first.)
		if t := sub.Task; t != nil && c.tasks.Get(t.ID) == t {
			if tid, id, ok := strings.Cut(k, "/"); ok && tid == t.ID {
				s.putBody(recFinish, appendFinish(s.body[:0], snapFinish{Task: t.ID, Submission: id, BodyHash: sub.BodyHash}))
				continue
			}
		}
		s.put(recSubmission, snapSubmission{Key: k, Submission: *sub})
	}
	for _, e := range c.idempotency.Sorted() {
		s.putBody(recIdempotency, appendPair(s.body[:0], snapPair{Key: e.Key, Value: e.Value}))
	}
	for _, k := range slices.Sorted(maps.Keys(c.nodes)) {
		s.put(recNode, snapPair{Key: k, Value: c.nodes[k]})
	}
	for _, x := range sortedBy(c.groups, func(x *groups.Group) string { return x.ID }) {
		s.put(recGroup, x)
	}
	for _, x := range sortedBy(c.teams, func(x *teams.Team) string { return x.Name }) {
		s.put(recTeam, x)
	}
	slices.SortFunc(c.usage, func(a, b usage.Row) int { return usage.CompareKeys(a.Key, b.Key) })
	for i := range c.usage {
		s.put(recUsage, &c.usage[i])
	}
	slices.SortFunc(c.usageTotals, func(a, b usage.Total) int { return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Model, b.Model)) })
	for i := range c.usageTotals {
		s.put(recUsageTotal, &c.usageTotals[i])
	}
	for _, x := range sortedBy(c.clusters, func(x *enroll.Cluster) string { return x.Key }) {
		s.put(recCluster, x)
	}
	for _, x := range sortedBy(c.enrollments, func(x *enroll.Enrollment) string { return x.Key }) {
		s.put(recEnrollment, x)
	}
	for _, x := range sortedBy(c.artifacts, func(x *artifacts.Artifact) string { return x.Digest }) {
		s.put(recArtifact, x)
	}
	for i := range c.audit {
		putRecord(s, recAudit, auditCodec, &c.audit[i])
	}
	for i := range c.refusals {
		putRecord(s, recRefusal, auditCodec, &c.refusals[i])
	}
	s.putBody(recEnd, nil)
	return s.err
}

// recordStream writes a snapshot's records, each its kind, its length
// and its body, until the first error, which it keeps. Its body buffer is
// reused from one record to the next.
type recordStream struct {
	w    io.Writer
	body []byte
	enc  *codec.Encoder   // the small tables, through go-msgpack
	rw   *mprecord.Writer // the large ones, without reflection (codec_records.go)
	head [1 + binary.MaxVarintLen64]byte
	err  error
}

func newRecordStream(w io.Writer) *recordStream {
	s := &recordStream{w: w, rw: mprecord.NewWriter(msgpackHandle())}
	s.enc = codec.NewEncoderBytes(&s.body, msgpackHandle())
	return s
}

// putBody writes one record whose body is b; the end record is its kind
// alone.
func (s *recordStream) putBody(kind uint8, b []byte) {
	if s.err != nil {
		return
	}
	s.body, s.head[0] = b, kind
	if kind == recEnd {
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

// readRecordsHeader reads a snapshot's magic and version, which must be
// one written in records (version 2 on).
func readRecordsHeader(r io.Reader) (version int, err error) {
	head := make([]byte, len(snapshotMagic)+1)
	if _, err := io.ReadFull(r, head); err != nil {
		return 0, fmt.Errorf("snapshot header: %w", err)
	}
	if !bytes.Equal(head[:len(snapshotMagic)], []byte(snapshotMagic)) {
		return 0, fmt.Errorf("not a snapshot in records: bad magic: %w", ErrInvalid)
	}
	v := int(head[len(snapshotMagic)])
	if v < oldestRecords || v > snapshotVersion {
		return 0, fmt.Errorf("snapshot version %d, this coordinator reads 1 to %d: %w", v, snapshotVersion, ErrInvalid)
	}
	return v, nil
}

// decodeRecords reads a version 2 or 3 snapshot, header included, into
// the shape load checks and indexes. Records are decoded one at a time.
func decodeRecords(r *bufio.Reader) (*snapshotV1, error) {
	v, err := readRecordsHeader(r)
	if err != nil {
		return nil, err
	}
	dec := codec.NewDecoderBytes(nil, msgpackHandle())
	snap := &snapshotV1{
		Version:     v,
		Submissions: map[string]Submission{},
		finishes:    map[string]snapFinish{},
		Idempotency: map[string]string{},
		Nodes:       map[string]string{},
	}
	rd := newRecordReader()
	var body bytes.Buffer
	for n := 0; ; n++ {
		kind, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", n, io.ErrUnexpectedEOF)
		}
		if (n == 0) != (kind == recMeta) {
			return nil, fmt.Errorf("record %d of kind %d: the meta record comes first and once: %w", n, kind, ErrInvalid)
		}
		if kind == recEnd {
			break
		}
		size, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: length: %w", n, err)
		}
		if size > maxRecordBytes {
			return nil, fmt.Errorf("record %d: %d bytes, over %d: %w", n, size, maxRecordBytes, ErrInvalid)
		}
		body.Reset()
		if _, err := io.CopyN(&body, r, int64(size)); err != nil { // grows with what arrives
			return nil, fmt.Errorf("record %d: %w", n, io.ErrUnexpectedEOF)
		}
		if done, err := rd.read(kind, body.Bytes(), snap); done || err != nil {
			if err != nil {
				return nil, fmt.Errorf("record %d of kind %d: %w", n, kind, err)
			}
			continue
		}
		dec.ResetBytes(body.Bytes())
		if err := decodeRecord(dec, kind, snap); err != nil {
			return nil, fmt.Errorf("record %d of kind %d: %w", n, kind, err)
		}
		if dec.NumBytesRead() != body.Len() {
			return nil, fmt.Errorf("record %d of kind %d: bytes after its value: %w", n, kind, ErrInvalid)
		}
		rd.share(kind, snap)
	}
	if _, err := r.Peek(1); err != io.EOF {
		return nil, fmt.Errorf("bytes after the end record: %w", ErrInvalid)
	}
	return snap, nil
}

func decodeRecord(dec *codec.Decoder, kind uint8, snap *snapshotV1) error {
	switch kind {
	case recMeta:
		var m snapMeta
		if err := dec.Decode(&m); err != nil {
			return err
		}
		snap.BootstrapGeneration, snap.Seq, snap.AuditSeq = m.BootstrapGeneration, m.Seq, m.AuditSeq
	case recCredential:
		return decodeInto(dec, &snap.Credentials)
	case recWorker:
		return decodeInto(dec, &snap.Workers)
	case recJob:
		return decodeInto(dec, &snap.Jobs)
	case recTask:
		return decodeInto(dec, &snap.Tasks)
	case recGroup:
		return decodeInto(dec, &snap.Groups)
	case recCluster:
		return decodeInto(dec, &snap.Clusters)
	case recTeam:
		return decodeInto(dec, &snap.Teams)
	case recUsage:
		return decodeInto(dec, &snap.Usage)
	case recUsageTotal:
		return decodeInto(dec, &snap.UsageTotals)
	case recEnrollment:
		return decodeInto(dec, &snap.Enrollments)
	case recArtifact:
		return decodeInto(dec, &snap.Artifacts)
	case recSubmission:
		var x snapSubmission
		if err := dec.Decode(&x); err != nil {
			return err
		}
		if snap.hasSubmission(x.Key) {
			return fmt.Errorf("submission %q listed twice: %w", x.Key, ErrInvalid)
		}
		snap.Submissions[x.Key] = x.Submission
	case recFinish:
		var x snapFinish
		if err := dec.Decode(&x); err != nil {
			return err
		}
		return snap.addFinish(x)
	case recIdempotency, recNode:
		var p snapPair
		if err := dec.Decode(&p); err != nil {
			return err
		}
		return snap.addPair(kind, p)
	case recAudit, recRefusal:
		var ev command.AuditEvent
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		snap.addAudit(kind, ev)
	default:
		return fmt.Errorf("unknown record kind: %w", ErrInvalid)
	}
	return nil
}

// addFinish adds a finish record to snap.
func (snap *snapshotV1) addFinish(x snapFinish) error {
	if snap.Version < 3 {
		return fmt.Errorf("a finish record in a version %d snapshot: %w", snap.Version, ErrInvalid)
	}
	key := submissionKey(x.Task, x.Submission)
	if x.Task == "" || snap.hasSubmission(key) {
		return fmt.Errorf("finish %q listed twice or without its task: %w", key, ErrInvalid)
	}
	snap.finishes[key] = x
	return nil
}

// addAudit adds an audit event or a refusal to snap.
func (snap *snapshotV1) addAudit(kind uint8, ev command.AuditEvent) {
	if kind == recAudit {
		snap.Audit = append(snap.Audit, ev)
	} else {
		snap.AuditRefusals = append(snap.AuditRefusals, ev)
	}
}

// addPair adds an idempotency key or a node to snap.
func (snap *snapshotV1) addPair(kind uint8, p snapPair) error {
	m := snap.Idempotency
	if kind == recNode {
		m = snap.Nodes
	}
	if _, dup := m[p.Key]; dup {
		return fmt.Errorf("key %q listed twice: %w", p.Key, ErrInvalid)
	}
	m[p.Key] = p.Value
	return nil
}

// decodeInto decodes one record and appends it to *list; load refuses
// the nil a msgpack nil decodes to.
func decodeInto[T any](dec *codec.Decoder, list *[]*T) error {
	var v *T
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// isJSON reports whether a snapshot is the version 1 JSON document.
func isJSON(r *bufio.Reader) bool {
	for i := 1; ; i++ {
		b, err := r.Peek(i)
		if err != nil {
			return false
		}
		switch c := b[i-1]; {
		case c == '{':
			return true
		case strings.IndexByte(" \t\r\n", c) < 0:
			return false
		}
	}
}

// recordNames name the record kinds, for RecordSizes.
var recordNames = map[uint8]string{
	recMeta: "meta", recCredential: "credentials", recWorker: "workers", recJob: "jobs", recTask: "tasks",
	recLog: "logs", recSubmission: "submissions", recIdempotency: "idempotency", recNode: "nodes",
	recGroup: "groups", recCluster: "clusters", recEnrollment: "enrollments", recArtifact: "artifacts",
	recAudit: "audit", recRefusal: "audit_refusals", recFinish: "finishes", recTeam: "teams", recUsage: "usage", recUsageTotal: "usage_totals",
}

// RecordSizes reads a version 2 or 3 snapshot's framing, without decoding
// a record, and returns the bytes its records take, by table.
func RecordSizes(r io.Reader) (map[string]int, error) {
	br := bufio.NewReader(r)
	if _, err := readRecordsHeader(br); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for {
		kind, err := br.ReadByte()
		if err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		if kind == recEnd {
			return out, nil
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if _, err := br.Discard(int(min(size, maxRecordBytes+1))); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		out[recordNames[kind]] += int(size)
	}
}
