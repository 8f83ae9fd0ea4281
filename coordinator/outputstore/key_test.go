package outputstore

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// awkwardIDs are task ids that hold the bytes the key escapes or ends
// with, and ids that are prefixes of others. (All are UTF-8: a section,
// JSON, turns other bytes of an id into U+FFFD.)
var awkwardIDs = []string{
	"a", "a\x00", "a\x00b", "a\x01", "a\x01\x01", "a\x02", "ab", "a\u00e9",
	"\x00", "\x01", "\x00\x00", "\x01\x00", "\u00ff", "b", "j0123456789abcdef-0",
}

// Keys sort as (task id, index) do, and give back the id and index.
func TestRecordKeysSortAsIDsThenIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := append(slices.Clone(awkwardIDs), "a\xff", "\xff", "\xff\x00")
	for range 200 {
		id := make([]byte, 1+rng.IntN(4))
		for i := range id {
			id[i] = []byte{0, 1, 2, 'a', 0xff}[rng.IntN(5)]
		}
		ids = append(ids, string(id))
	}
	indexes := []uint64{0, 1, 2, 255, 256, 1 << 56}
	type rec struct {
		id string
		i  uint64
	}
	var recs []rec
	for _, id := range ids {
		for _, i := range indexes {
			recs = append(recs, rec{id, i})
		}
	}
	for _, r := range recs {
		k := recordKey(r.id, r.i)
		p, i, err := keyPrefix(k)
		if err != nil {
			t.Fatalf("key of %q %d: %v", r.id, r.i, err)
		}
		id, err := prefixTask(p)
		if err != nil || id != r.id || i != r.i {
			t.Fatalf("key of %q %d reads back as %q %d, %v", r.id, r.i, id, i, err)
		}
		if !isRecordOf(k, taskPrefix(r.id)) {
			t.Fatalf("key of %q %d is not a record of its task", r.id, r.i)
		}
	}
	for range 20000 {
		a, b := recs[rng.IntN(len(recs))], recs[rng.IntN(len(recs))]
		want := cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.i, b.i))
		if got := bytes.Compare(recordKey(a.id, a.i), recordKey(b.id, b.i)); got != want {
			t.Fatalf("keys of %q %d and %q %d compare %d, want %d", a.id, a.i, b.id, b.i, got, want)
		}
		if a.id != b.id && isRecordOf(recordKey(a.id, a.i), taskPrefix(b.id)) {
			t.Fatalf("key of %q %d counts as a record of %q", a.id, a.i, b.id)
		}
	}
}

// Keys no record has are refused, not read as some task's.
func TestMalformedKeys(t *testing.T) {
	for _, k := range []string{"", "a", "a\x00\x00\x00\x00\x00\x00\x00", "a\x01\x00\x00\x00\x00\x00\x00\x00\x00",
		"a\x01\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00", "a\x00b\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
		p, _, err := keyPrefix([]byte(k))
		if err == nil {
			_, err = prefixTask(p)
		}
		if err == nil {
			t.Errorf("key %q read as a record's", k)
		}
	}
}

// Tasks whose ids hold any bytes, or are prefixes of each other, keep
// their records apart through writes, reads, deletes, a capture (tasks in
// byte order) and a restore.
func TestAwkwardTaskIDs(t *testing.T) {
	s := openTemp(t)
	var ops []output.Op
	for n := range 3 {
		for i, id := range awkwardIDs {
			ops = append(ops, output.Op{TaskID: id, Record: output.Record{Seq: int64(n), Data: fmt.Sprintf("%d/%d", i, n)}})
		}
	}
	if err := s.Write(ops); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		for i, id := range awkwardIDs {
			recs, err := s.Read(id, 1, 1<<20)
			if n, _ := s.Count(id); err != nil || len(recs) != 2 || n != 3 {
				t.Fatalf("task %q: %d records from 1 (%v), count %d; want 2 of 3", id, len(recs), err, n)
			}
			for j, r := range recs {
				if r.Data != fmt.Sprintf("%d/%d", i, j+1) {
					t.Fatalf("task %q record %d holds %q", id, j+1, r.Data)
				}
			}
		}
	}
	check(s)

	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	var section bytes.Buffer
	_, err = c.WriteTo(&section)
	c.Release()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	dec := output.NewDecoder(bytes.NewReader(section.Bytes()))
	for {
		l, err := dec.Next()
		if err != nil {
			break
		}
		if len(order) == 0 || order[len(order)-1] != l.Task {
			order = append(order, l.Task)
		}
	}
	if want := slices.Sorted(slices.Values(awkwardIDs)); !slices.Equal(order, want) {
		t.Fatalf("capture lists tasks %q, want %q", order, want)
	}

	dst := openTemp(t)
	prep, err := dst.Prepare(bytes.NewReader(section.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := prep.Commit(); err != nil {
		t.Fatal(err)
	}
	check(dst)
	for _, id := range []string{"a\x00", "a", "\x01"} {
		if err := dst.Write([]output.Op{{TaskID: id, Delete: true}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range awkwardIDs {
		recs, _ := dst.Read(id, 0, 1<<20)
		deleted := id == "a\x00" || id == "a" || id == "\x01"
		if deleted != (len(recs) == 0) || (!deleted && (len(recs) != 3 || recs[0].Data != fmt.Sprintf("%d/0", i))) {
			t.Fatalf("after the deletes task %q holds %+v", id, recs)
		}
	}
}

// Deleting a task whose records fill many pages removes every one of
// them and nothing of the tasks on either side, also when the write
// that deletes it appended to it first (bbolt then holds some of its
// pages as nodes, which a delete changes under a cursor).
func TestDeleteLargeTask(t *testing.T) {
	s := openTemp(t)
	var ops []output.Op
	for i := range 2000 {
		for _, id := range []string{"a", "b", "c"} {
			ops = append(ops, output.Op{TaskID: id, Record: output.Record{Seq: int64(i), Data: strings.Repeat("d", 100)}})
		}
	}
	if err := s.Write(ops); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]output.Op{{TaskID: "b", Delete: true}, {TaskID: "b", Record: output.Record{Seq: 9, Data: "again"}}}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"a": 2000, "b": 1, "c": 2000} {
		recs, err := s.Read(id, 0, 1<<30)
		if n, _ := s.Count(id); err != nil || len(recs) != want || n != want {
			t.Errorf("task %s: %d records (%v), count %d; want %d", id, len(recs), err, n, want)
		}
	}
	if recs, _ := s.Read("b", 0, 1<<20); len(recs) != 1 || recs[0].Data != "again" {
		t.Errorf("task b after delete and append: %+v", recs)
	}
	if err := s.Write([]output.Op{{TaskID: "a", Record: output.Record{Seq: 1}}, {TaskID: "c", Record: output.Record{Seq: 1}},
		{TaskID: "a", Delete: true}, {TaskID: "c", Delete: true}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "c"} {
		if recs, _ := s.Read(id, 0, 1<<30); len(recs) != 0 {
			t.Errorf("task %s holds %d records after its delete", id, len(recs))
		}
	}
	if recs, _ := s.Read("b", 0, 1<<20); len(recs) != 1 {
		t.Errorf("task b holds %d records after its neighbours' deletes, want 1", len(recs))
	}
}
