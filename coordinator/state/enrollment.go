package state

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
)

// The enrollment commands: the room (package enroll) keeps the clusters,
// the allowlist rows and the check; the state creates the enrolled
// worker, revokes a revoked row's worker and audits each change.

// ContainsSource reports whether the cluster's networks hold ip.
func (s *Store) ContainsSource(clusterKey string, ip netip.Addr) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Contains(clusterKey, ip)
}

func (s *Store) putCluster(c command.PutCluster) (enroll.ClusterOutcome, error) {
	out, err := s.allowlist.PutCluster(c.ClusterKey, c.CIDRs, c.By, c.Now)
	if err != nil {
		return out, err
	}
	kind := "cluster.created"
	if !out.Created {
		kind = "cluster.updated"
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, Subject: c.ClusterKey, Source: c.Source, Detail: "allowed_source_cidrs " + strings.Join(c.CIDRs, ",")})
	return out, nil
}

func (s *Store) createEnrollment(c command.CreateEnrollment) (enroll.Enrollment, error) {
	e, err := s.allowlist.CreateRow(c.ClusterKey, c.ExternalWorkerKey, c.PublicIP, c.By, c.Now)
	if err != nil {
		return e, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "enrollment.created", Actor: c.By, Subject: e.Key, Source: c.Source, Detail: "cluster " + e.ClusterKey + ", public_ip " + e.PublicIP})
	return e, nil
}

func (s *Store) revokeEnrollment(c command.RevokeEnrollment) (enroll.Enrollment, error) {
	e, changed, err := s.allowlist.RevokeRow(c.ExternalWorkerKey, c.By, c.Now)
	if err != nil || !changed {
		return e, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "enrollment.revoked", Actor: c.By, Subject: e.Key, WorkerID: e.WorkerID, Source: c.Source, Detail: "cluster " + e.ClusterKey})
	if w, ok := s.workers[e.WorkerID]; ok && w.Status != workerRevoked {
		s.revokeWorkerLocked(w, c.By, c.Source, "allowlist row "+e.Key+" revoked", c.Now)
	}
	return e, nil
}

// EnrollCheck is what the enroll handler checks before proposing, so that
// refusals cost no Raft write; the state machine checks again when the
// enrollment applies. It returns the refusal (ErrEnrollmentRefused or
// ErrConflict) and, for the audit log, the precise reason.
func (s *Store) EnrollCheck(clusterKey, key string, source netip.Addr) (reason string, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Check(clusterKey, key, source)
}

// refusal is the message a refused enroller gets: it says what must match,
// not which part did not (the audit log says that).
const refusal = "no allowlist entry matches this cluster key, external worker key and source address"

func (s *Store) enrollWorker(c command.EnrollWorker) (RegisterOutcome, error) {
	ev := command.AuditEvent{Time: c.Now, Kind: "enrollment.refused", Subject: c.ExternalWorkerKey, Source: c.SourceIP, Route: "POST /v1/workers/enroll"}
	source, _ := netip.ParseAddr(c.SourceIP)
	if reason, err := s.allowlist.Check(c.ClusterKey, c.ExternalWorkerKey, source); err != nil {
		ev.Detail = "cluster " + c.ClusterKey + ": " + reason
		if errors.Is(err, ErrConflict) {
			ev.Code = codeConflict
			s.audit.Record(ev)
			return RegisterOutcome{}, fmt.Errorf("allowlist row %s is already enrolled; it hands out no second credential: %w", c.ExternalWorkerKey, ErrConflict)
		}
		ev.Code = codeEnrollmentRefused
		s.audit.Record(ev)
		return RegisterOutcome{}, fmt.Errorf("%s: %w", refusal, ErrEnrollmentRefused)
	}
	if _, exists := s.workers[c.WorkerID]; exists {
		return RegisterOutcome{}, fmt.Errorf("worker %s exists; enroll under another worker id: %w", c.WorkerID, ErrConflict)
	}
	if c.Credential.ID == "" || c.Credential.Hash == "" {
		return RegisterOutcome{}, fmt.Errorf("%w: enroll without credential", ErrInvalid)
	}
	if s.credentials.Has(c.Credential.ID) {
		return RegisterOutcome{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	e, _ := s.allowlist.Row(c.ExternalWorkerKey) // Check found it
	w := &Worker{
		ID:           c.WorkerID,
		Status:       workerReady,
		Labels:       c.Labels,
		Capabilities: c.Capabilities,
		Executors:    c.Executors,
		Devices:      c.Devices,
		// What it enrolls with is its approved inventory, as at
		// registration (RegisterWorker).
		ApprovedDevices:   fit.Inventory(c.Devices),
		ApprovedIdentity:  fit.Identities(c.Devices),
		CredentialID:      c.Credential.ID,
		RegisteredAt:      c.Now,
		RegisteredBy:      "enrollment:" + e.Key,
		Origin:            originEnrollment,
		ClusterKey:        e.ClusterKey,
		ExternalWorkerKey: e.Key,
	}
	cred := c.Credential
	cred.WorkerID = w.ID
	s.credentials.Put(cred)
	s.putWorker(w) // gangtopology_index.go
	s.allowlist.MarkEnrolled(e.Key, w.ID, c.Now)
	ev.Kind, ev.WorkerID, ev.CredentialID, ev.CredentialKind = "enrollment.accepted", w.ID, cred.ID, creds.KindWorker
	ev.Detail = "cluster " + e.ClusterKey
	s.audit.Record(ev)
	s.markPending()
	return RegisterOutcome{Created: true, Worker: s.workerRecord(w)}, nil
}

// Clusters lists the enrollment clusters by key.
func (s *Store) Clusters() []enroll.Cluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Clusters()
}

// Cluster returns one enrollment cluster.
func (s *Store) Cluster(key string) (enroll.Cluster, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Cluster(key)
}

// Enrollments lists the allowlist rows by key.
func (s *Store) Enrollments() []enroll.Enrollment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Rows()
}

// Enrollment returns one allowlist row.
func (s *Store) Enrollment(key string) (enroll.Enrollment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.allowlist.Row(key)
}
