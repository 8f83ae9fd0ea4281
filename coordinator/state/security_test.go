package state

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func cred(id, kind string) command.CredentialRecord {
	return command.CredentialRecord{ID: id, Kind: kind, Name: id, Hash: "h-" + id, CreatedAt: t0}
}

func redeemAs(s *Store, worker, token, origin, instance string) Result {
	return s.Apply(command.RegisterWorker{WorkerID: worker, Credential: cred("wc-"+worker, "worker"), TokenID: token, Origin: origin, InstanceID: instance,
		Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: t0}).(Result)
}

// Redemption is decided inside Apply: a one-time code applied twice wins
// once, whatever the order the two proposals arrive in.
func TestRedemptionIsDecidedInApply(t *testing.T) {
	s := New()
	code := cred("code", "join")
	code.MaxUses = 1
	if res := s.Apply(command.CreateToken{Credential: code, Now: t0}).(Result); res.Err() != nil {
		t.Fatal(res.Err())
	}
	if res := redeemAs(s, "a", "code", "", ""); res.Err() != nil {
		t.Fatalf("first redemption: %v", res.Err())
	}
	if res := redeemAs(s, "b", "code", "", ""); !errors.Is(res.Err(), ErrCredentialUnusable) {
		t.Fatalf("second redemption: %v, want ErrCredentialUnusable", res.Err())
	}
	if _, err := s.Worker("b"); err == nil {
		t.Fatal("the losing registration created a worker")
	}

	inst := cred("inst", "instance")
	inst.MaxUses, inst.InstanceID = 1, "i-1"
	s.Apply(command.CreateToken{Credential: inst, Now: t0})
	if res := redeemAs(s, "p", "inst", api.OriginProvider, "i-2"); !errors.Is(res.Err(), ErrForbidden) {
		t.Fatalf("instance mismatch: %v", res.Err())
	}
	if c, _ := s.Credential("inst"); c.Uses != 0 {
		t.Fatal("a refused instance registration consumed the token")
	}
	if res := redeemAs(s, "p", "inst", "", ""); !errors.Is(res.Err(), ErrForbidden) {
		t.Fatalf("instance token without origin provider: %v", res.Err())
	}
	if res := redeemAs(s, "p", "inst", api.OriginProvider, "i-1"); res.Err() != nil {
		t.Fatal(res.Err())
	}
	if res := redeemAs(s, "q", "code2-missing", "", ""); !errors.Is(res.Err(), ErrCredentialUnusable) {
		t.Fatalf("unknown token: %v", res.Err())
	}

	exp := cred("exp", "join")
	exp.ExpiresAt = t0.Add(-time.Second)
	s.Apply(command.CreateToken{Credential: exp, Now: t0})
	if res := redeemAs(s, "e", "exp", "", ""); !errors.Is(res.Err(), ErrCredentialUnusable) {
		t.Fatalf("expired token: %v", res.Err())
	}
}

func TestEnrollmentDecisions(t *testing.T) {
	s := New()
	s.Apply(command.PutCluster{ClusterKey: "lab", CIDRs: []string{"203.0.113.0/24"}, Now: t0})
	if res := s.Apply(command.CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "out", PublicIP: "198.51.100.1", Now: t0}).(Result); !errors.Is(res.Err(), ErrInvalid) {
		t.Fatalf("row outside: %v", res.Err())
	}
	s.Apply(command.CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "vm", PublicIP: "203.0.113.5", Now: t0})
	enroll := func(src, worker string) Result {
		return s.Apply(command.EnrollWorker{ClusterKey: "lab", ExternalWorkerKey: "vm", SourceIP: src, WorkerID: worker, Credential: cred("wc-"+worker, "worker"), Now: t0}).(Result)
	}
	if res := enroll("203.0.113.6", "w1"); !errors.Is(res.Err(), ErrEnrollmentRefused) {
		t.Fatalf("wrong source: %v", res.Err())
	}
	if res := enroll("203.0.113.5", "w1"); res.Err() != nil {
		t.Fatal(res.Err())
	}
	if res := enroll("203.0.113.5", "w2"); !errors.Is(res.Err(), ErrConflict) {
		t.Fatalf("re-enroll: %v", res.Err())
	}
	if !s.ContainsSource("lab", netip.MustParseAddr("203.0.113.200")) || s.ContainsSource("lab", netip.MustParseAddr("198.51.100.1")) {
		t.Fatal("ContainsSource")
	}
	if res := s.Apply(command.PutCluster{ClusterKey: "lab", CIDRs: []string{"198.51.100.0/24"}, Now: t0}).(Result); !errors.Is(res.Err(), ErrConflict) {
		t.Fatalf("narrowing: %v", res.Err())
	}
	s.Apply(command.RevokeEnrollment{ExternalWorkerKey: "vm", By: "admin", Now: t0})
	if w, _ := s.Worker("w1"); w.Worker.Status != api.WorkerRevoked {
		t.Fatalf("worker of a revoked row is %s", w.Worker.Status)
	}
	if res := enroll("203.0.113.5", "w3"); !errors.Is(res.Err(), ErrEnrollmentRefused) {
		t.Fatalf("revoked row: %v", res.Err())
	}
	kinds := map[string]int{}
	for _, ev := range s.Audit(audit.Filter{}) {
		kinds[ev.Kind]++
	}
	if kinds["enrollment.refused"] != 3 || kinds["enrollment.accepted"] != 1 || kinds["worker.revoked"] != 1 {
		t.Fatalf("audited %v", kinds)
	}
}

// The new tables survive a snapshot, byte for byte.
func TestSecuritySnapshotRoundTrip(t *testing.T) {
	s := New()
	s.Apply(command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{cred("adm", "client")}, Now: t0})
	s.Apply(command.CreateToken{Credential: cred("j1", "join"), Now: t0})
	s.Apply(command.PutCluster{ClusterKey: "lab", CIDRs: []string{"10.0.0.0/8"}, Now: t0})
	s.Apply(command.CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "vm", PublicIP: "10.0.0.9", Now: t0})
	s.Apply(command.RecordArtifact{Digest: "ab", Size: 2, NodeID: "c1", Now: t0})
	s.Apply(command.AppendAudit{Events: []command.AuditEvent{{Time: t0, Kind: "auth.refused", Count: 3}}})
	r, _ := roundTrip(t, s)
	if !r.ContainsSource("lab", netip.MustParseAddr("10.9.9.9")) {
		t.Fatal("restored cluster lost its networks")
	}
	if res := r.Apply(command.AppendAudit{Events: []command.AuditEvent{{Time: t0, Kind: "x"}}}).(Result); res.Err() != nil {
		t.Fatal(res.Err())
	}
	evs := r.Audit(audit.Filter{Kinds: []string{"x"}})
	if len(evs) != 1 || evs[0].Seq != uint64(len(s.Audit(audit.Filter{})))+1 {
		t.Fatalf("sequence after restore: %+v", evs)
	}
}

// The audit log keeps a bounded number of events.
func TestAuditLogIsBounded(t *testing.T) {
	s := New()
	batch := make([]command.AuditEvent, audit.MaxBatch)
	for i := range batch {
		batch[i] = command.AuditEvent{Time: t0, Kind: "auth.refused"}
	}
	for range audit.MaxRefusals/audit.MaxBatch + 20 {
		s.Apply(command.AppendAudit{Events: batch})
	}
	s.mu.RLock()
	_, refusals, last := s.audit.Frozen()
	n := len(refusals)
	s.mu.RUnlock()
	if n > audit.MaxRefusals+audit.MaxRefusals/8 || n < audit.MaxRefusals {
		t.Fatalf("%d events kept", n)
	}
	if evs := s.Audit(audit.Filter{After: last - 1}); len(evs) != 1 || evs[0].Seq != last {
		t.Fatalf("the newest event: %+v", evs)
	}
	if res := s.Apply(command.AppendAudit{Events: make([]command.AuditEvent, audit.MaxBatch+1)}).(Result); !errors.Is(res.Err(), ErrInvalid) {
		t.Fatalf("oversized batch: %v", res.Err())
	}
}
