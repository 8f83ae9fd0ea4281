package enroll

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// A row enrolls once, only from its own address inside its cluster's
// networks; a revoked row never does, and a cluster's networks cannot
// move away from a live row.
func TestAnEnrollmentPassesEveryCheck(t *testing.T) {
	tb := New()
	if out, err := tb.PutCluster("lab", []string{"10.1.0.0/16"}, "admin", now); err != nil || !out.Created {
		t.Fatalf("put cluster: %+v %v", out, err)
	}
	if _, err := tb.CreateRow("lab", "node-1", "10.2.0.1", "admin", now); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a row outside the networks: %v", err)
	}
	if _, err := tb.CreateRow("lab", "node-1", "10.1.0.1", "admin", now); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.CreateRow("lab", "node-1", "10.1.0.2", "admin", now); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("a key twice: %v", err)
	}
	if _, err := tb.PutCluster("lab", []string{"10.9.0.0/16"}, "admin", now); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("networks leaving a live row outside: %v", err)
	}
	for _, c := range []struct {
		cluster, key, from string
		want               error
	}{
		{"nope", "node-1", "10.1.0.1", stateerr.ErrEnrollmentRefused},
		{"lab", "node-2", "10.1.0.1", stateerr.ErrEnrollmentRefused},
		{"lab", "node-1", "10.1.0.9", stateerr.ErrEnrollmentRefused},
		{"lab", "node-1", "10.1.0.1", nil},
	} {
		if reason, err := tb.Check(c.cluster, c.key, netip.MustParseAddr(c.from)); !errors.Is(err, c.want) || (err != nil) != (reason != "") {
			t.Errorf("%+v: %q %v", c, reason, err)
		}
	}
	if e := tb.MarkEnrolled("node-1", "w1", now); e.Status != Enrolled || e.WorkerID != "w1" {
		t.Fatalf("enrolled: %+v", e)
	}
	if _, err := tb.Check("lab", "node-1", netip.MustParseAddr("10.1.0.1")); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("a second enrollment: %v", err)
	}
	if _, changed, err := tb.RevokeRow("node-1", "admin", now); err != nil || !changed {
		t.Fatalf("revoke: %v %v", changed, err)
	}
	if _, changed, _ := tb.RevokeRow("node-1", "admin", now); changed {
		t.Fatal("revoked twice")
	}
	if _, err := tb.Check("lab", "node-1", netip.MustParseAddr("10.1.0.1")); !errors.Is(err, stateerr.ErrEnrollmentRefused) {
		t.Fatalf("a revoked row: %v", err)
	}
	if out, err := tb.PutCluster("lab", []string{"10.9.0.0/16"}, "admin", now); err != nil || out.Created {
		t.Fatalf("networks moved once the row is revoked: %+v %v", out, err)
	}
	if !tb.Contains("lab", netip.MustParseAddr("::ffff:10.9.1.1")) || tb.Contains("lab", netip.MustParseAddr("10.1.0.1")) {
		t.Fatal("the cluster's networks after the move")
	}
}

// A restore parses the networks again and refuses a bad one.
func TestRestoreParsesNetworks(t *testing.T) {
	tb, err := Restore([]*Cluster{{Key: "lab", CIDRs: []string{"10.1.0.0/16"}}}, []*Enrollment{{Key: "n", ClusterKey: "lab", PublicIP: "10.1.0.1", Status: Pending}})
	if err != nil || !tb.Contains("lab", netip.MustParseAddr("10.1.2.3")) || len(tb.Rows()) != 1 {
		t.Fatalf("restore: %v", err)
	}
	if _, err := Restore([]*Cluster{{Key: "lab", CIDRs: []string{"not-a-cidr"}}}, nil); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a bad network: %v", err)
	}
}
