package snapcodec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Decode reads a snapshot of version 3 or 2 or the older JSON version 1,
// one record at a time, into an Image. It checks that each record is well
// formed and listed once; what the records mean together is the state's
// to check.
func Decode(r io.Reader) (*Image, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if !isJSON(br) {
		return decodeRecords(br)
	}
	snap := &Image{}
	if err := json.NewDecoder(br).Decode(snap); err != nil {
		return nil, err
	}
	if snap.Version != 1 {
		return nil, fmt.Errorf("snapshot version %d: %w", snap.Version, stateerr.ErrInvalid)
	}
	snap.share()
	return snap, nil
}

// readRecordsHeader reads a snapshot's magic and version, which must be
// one written in records (version 2 on).
func readRecordsHeader(r io.Reader) (version int, err error) {
	head := make([]byte, len(Magic)+1)
	if _, err := io.ReadFull(r, head); err != nil {
		return 0, fmt.Errorf("snapshot header: %w", err)
	}
	if !bytes.Equal(head[:len(Magic)], []byte(Magic)) {
		return 0, fmt.Errorf("not a snapshot in records: bad magic: %w", stateerr.ErrInvalid)
	}
	v := int(head[len(Magic)])
	if v < oldestRecords || v > Version {
		return 0, fmt.Errorf("snapshot version %d, this coordinator reads 1 to %d: %w", v, Version, stateerr.ErrInvalid)
	}
	return v, nil
}

// decodeRecords reads a version 2 or 3 snapshot, header included, into
// the shape load checks and indexes. Records are decoded one at a time.
func decodeRecords(r *bufio.Reader) (*Image, error) {
	v, err := readRecordsHeader(r)
	if err != nil {
		return nil, err
	}
	dec := codec.NewDecoderBytes(nil, Handle())
	snap := &Image{
		Version:     v,
		Submissions: map[string]record.Submission{},
		Finishes:    map[string]Finish{},
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
		if (n == 0) != (kind == RecMeta) {
			return nil, fmt.Errorf("record %d of kind %d: the meta record comes first and once: %w", n, kind, stateerr.ErrInvalid)
		}
		if kind == RecEnd {
			break
		}
		size, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: length: %w", n, err)
		}
		if size > MaxRecordBytes {
			return nil, fmt.Errorf("record %d: %d bytes, over %d: %w", n, size, MaxRecordBytes, stateerr.ErrInvalid)
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
			return nil, fmt.Errorf("record %d of kind %d: bytes after its value: %w", n, kind, stateerr.ErrInvalid)
		}
		rd.share(kind, snap)
	}
	if _, err := r.Peek(1); err != io.EOF {
		return nil, fmt.Errorf("bytes after the end record: %w", stateerr.ErrInvalid)
	}
	return snap, nil
}

func decodeRecord(dec *codec.Decoder, kind uint8, snap *Image) error {
	switch kind {
	case RecMeta:
		var m Meta
		if err := dec.Decode(&m); err != nil {
			return err
		}
		snap.BootstrapGeneration, snap.Seq, snap.AuditSeq = m.BootstrapGeneration, m.Seq, m.AuditSeq
	case RecCredential:
		return decodeInto(dec, &snap.Credentials)
	case RecWorker:
		return decodeInto(dec, &snap.Workers)
	case RecJob:
		return decodeInto(dec, &snap.Jobs)
	case RecTask:
		return decodeInto(dec, &snap.Tasks)
	case RecGroup:
		return decodeInto(dec, &snap.Groups)
	case RecCluster:
		return decodeInto(dec, &snap.Clusters)
	case RecTeam:
		return decodeInto(dec, &snap.Teams)
	case RecUsage:
		return decodeInto(dec, &snap.Usage)
	case RecUsageTotal:
		return decodeInto(dec, &snap.UsageTotals)
	case RecEnrollment:
		return decodeInto(dec, &snap.Enrollments)
	case RecArtifact:
		return decodeInto(dec, &snap.Artifacts)
	case RecSubmission:
		var x SubmissionRecord
		if err := dec.Decode(&x); err != nil {
			return err
		}
		if snap.hasSubmission(x.Key) {
			return fmt.Errorf("submission %q listed twice: %w", x.Key, stateerr.ErrInvalid)
		}
		snap.Submissions[x.Key] = x.Submission
	case RecFinish:
		var x Finish
		if err := dec.Decode(&x); err != nil {
			return err
		}
		return snap.addFinish(x)
	case RecIdempotency, RecNode:
		var p Pair
		if err := dec.Decode(&p); err != nil {
			return err
		}
		return snap.addPair(kind, p)
	case RecAudit, RecRefusal:
		var ev command.AuditEvent
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		snap.addAudit(kind, ev)
	default:
		return fmt.Errorf("unknown record kind: %w", stateerr.ErrInvalid)
	}
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
	RecMeta: "meta", RecCredential: "credentials", RecWorker: "workers", RecJob: "jobs", RecTask: "tasks",
	RecLog: "logs", RecSubmission: "submissions", RecIdempotency: "idempotency", RecNode: "nodes",
	RecGroup: "groups", RecCluster: "clusters", RecEnrollment: "enrollments", RecArtifact: "artifacts",
	RecAudit: "audit", RecRefusal: "audit_refusals", RecFinish: "finishes", RecTeam: "teams", RecUsage: "usage", RecUsageTotal: "usage_totals",
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
		if kind == RecEnd {
			return out, nil
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if _, err := br.Discard(int(min(size, MaxRecordBytes+1))); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		out[recordNames[kind]] += int(size)
	}
}
