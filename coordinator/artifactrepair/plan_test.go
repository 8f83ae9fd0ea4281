package artifactrepair

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
)

// Plan picks the artifacts with fewer live holders than
// min(2, cluster size), the coordinators to copy them to (the leader
// first, then the others that hold none and have an address), and
// bounds the round, resuming after the last digest it took.
func TestPlanReplication(t *testing.T) {
	d := func(c string) string { return strings.Repeat(c, 64) }
	art := func(c string, size int64, holders ...string) artifacts.Artifact {
		return artifacts.Artifact{Digest: d(c), Size: size, Holders: holders}
	}
	three := []string{"c1", "c2", "c3"}
	all := func(string) bool { return true }
	cases := []struct {
		name      string
		records   []artifacts.Artifact
		self      string
		members   []string
		reachable func(string) bool
		after     string
		limit     int
		maxBytes  int64
		want      []Replication
		lost      int
		more      bool
	}{
		{name: "two live holders: nothing to do", records: []artifacts.Artifact{art("a", 1, "c1", "c2")}, self: "c1", members: three, reachable: all, limit: 10, maxBytes: 100},
		{name: "a holder that left the configuration does not count; the leader lacks it, so it takes it first",
			records: []artifacts.Artifact{art("a", 3, "c2", "c9")}, self: "c1", members: three, reachable: all, limit: 10, maxBytes: 100,
			want: []Replication{{Digest: d("a"), Size: 3, Copies: 1, Sources: []string{"c2"}, Targets: []string{"c1", "c3"}}}},
		{name: "the leader holds it: the others without a copy, in order",
			records: []artifacts.Artifact{art("a", 3, "c1")}, self: "c1", members: []string{"c1", "c2", "c3", "c4"}, reachable: all, limit: 10, maxBytes: 100,
			want: []Replication{{Digest: d("a"), Size: 3, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3", "c4"}}}},
		{name: "a coordinator without a recorded address is not asked",
			records: []artifacts.Artifact{art("a", 3, "c1")}, self: "c1", members: three, reachable: func(id string) bool { return id != "c2" }, limit: 10, maxBytes: 100,
			want: []Replication{{Digest: d("a"), Size: 3, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c3"}}}},
		{name: "no coordinator to copy to: left out",
			records: []artifacts.Artifact{art("a", 3, "c1")}, self: "c1", members: three, reachable: func(id string) bool { return id == "c1" }, limit: 10, maxBytes: 100},
		{name: "no live holder: lost, not planned",
			records: []artifacts.Artifact{art("a", 3, "c8", "c9"), art("b", 3)}, self: "c1", members: three, reachable: all, limit: 10, maxBytes: 100, lost: 2},
		{name: "a cluster of one needs one copy",
			records: []artifacts.Artifact{art("a", 3, "c1"), art("b", 3, "c9")}, self: "c1", members: []string{"c1"}, reachable: all, limit: 10, maxBytes: 100, lost: 1},
		{name: "a cluster of two needs two",
			records: []artifacts.Artifact{art("a", 3, "c2")}, self: "c1", members: []string{"c1", "c2"}, reachable: all, limit: 10, maxBytes: 100,
			want: []Replication{{Digest: d("a"), Size: 3, Copies: 1, Sources: []string{"c2"}, Targets: []string{"c1"}}}},
		{name: "at most limit a round",
			records: []artifacts.Artifact{art("a", 1, "c1"), art("b", 1, "c1"), art("c", 1, "c1")}, self: "c1", members: three, reachable: all, limit: 2, maxBytes: 100, more: true,
			want: []Replication{{Digest: d("a"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}},
				{Digest: d("b"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}}}},
		{name: "the next round starts after the last one taken, and wraps around",
			records: []artifacts.Artifact{art("a", 1, "c1"), art("b", 1, "c1", "c2"), art("c", 1, "c1")}, self: "c1", members: three, reachable: all, after: d("a"), limit: 2, maxBytes: 100,
			want: []Replication{{Digest: d("c"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}},
				{Digest: d("a"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}}}},
		{name: "a cursor that names no record starts at the next digest",
			records: []artifacts.Artifact{art("a", 1, "c1"), art("c", 1, "c1")}, self: "c1", members: three, reachable: all, after: d("b"), limit: 1, maxBytes: 100, more: true,
			want: []Replication{{Digest: d("c"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}}}},
		{name: "the byte bound takes the first however large, then only what still fits",
			records: []artifacts.Artifact{art("a", 80, "c1"), art("b", 30, "c1"), art("c", 10, "c1")}, self: "c1", members: three, reachable: all, limit: 10, maxBytes: 90, more: true,
			want: []Replication{{Digest: d("a"), Size: 80, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}},
				{Digest: d("c"), Size: 10, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}}}},
		{name: "a follower that plans (it never runs one) is not its own target when outside the configuration",
			records: []artifacts.Artifact{art("a", 1, "c1")}, self: "c9", members: three, reachable: all, limit: 10, maxBytes: 100,
			want: []Replication{{Digest: d("a"), Size: 1, Copies: 1, Sources: []string{"c1"}, Targets: []string{"c2", "c3"}}}},
		{name: "no records", self: "c1", members: three, reachable: all, limit: 10, maxBytes: 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, lost, more := Plan(c.records, c.self, c.members, c.reachable, c.after, c.limit, c.maxBytes)
			if !reflect.DeepEqual(got, c.want) || lost != c.lost || more != c.more {
				t.Fatalf("plan %+v lost %d more %v\nwant %+v lost %d more %v", got, lost, more, c.want, c.lost, c.more)
			}
		})
	}
}
