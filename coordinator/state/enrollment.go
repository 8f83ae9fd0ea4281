package state

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Cluster is a set of networks allowlisted workers enroll from.
type Cluster struct {
	Key       string    `json:"key"`
	CIDRs     []string  `json:"cidrs"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`

	prefixes []netip.Prefix
}

// Enrollment is one allowlist row: pending → enrolled, or revoked at any
// time (for good).
type Enrollment struct {
	Key        string    `json:"key"`
	ClusterKey string    `json:"cluster_key"`
	PublicIP   string    `json:"public_ip"`
	Status     string    `json:"status"`
	WorkerID   string    `json:"worker_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	CreatedBy  string    `json:"created_by,omitempty"`
	EnrolledAt time.Time `json:"enrolled_at,omitzero"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	RevokedBy  string    `json:"revoked_by,omitempty"`
}

// parsePrefixes parses canonical CIDRs; the handler has checked them, so a
// failure here means a bad command.
func parsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("%w: cidr %q", ErrInvalid, c)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (c *Cluster) contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range c.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ContainsSource reports whether the cluster's networks hold ip.
func (s *Store) ContainsSource(clusterKey string, ip netip.Addr) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.clusters[clusterKey]
	return ok && ip.IsValid() && c.contains(ip)
}

func (s *Store) putCluster(c command.PutCluster) (ClusterOutcome, error) {
	prefixes, err := parsePrefixes(c.CIDRs)
	if err != nil {
		return ClusterOutcome{}, err
	}
	if len(prefixes) == 0 {
		return ClusterOutcome{}, fmt.Errorf("%w: a cluster needs at least one source network", ErrInvalid)
	}
	cl, exists := s.clusters[c.ClusterKey]
	next := &Cluster{Key: c.ClusterKey, CIDRs: slices.Clone(c.CIDRs), CreatedAt: c.Now, CreatedBy: c.By, UpdatedAt: c.Now, prefixes: prefixes}
	if exists {
		next.CreatedAt, next.CreatedBy = cl.CreatedAt, cl.CreatedBy
		var outside []string
		for _, key := range s.sortedEnrollmentKeys() {
			e := s.enrollments[key]
			if e.ClusterKey == c.ClusterKey && e.Status != enrollmentRevoked && !next.contains(netip.MustParseAddr(e.PublicIP)) {
				outside = append(outside, key)
			}
		}
		if len(outside) > 0 {
			return ClusterOutcome{}, fmt.Errorf("allowlist rows %s would lie outside cluster %s's networks; revoke them first: %w", strings.Join(outside, ","), c.ClusterKey, ErrConflict)
		}
	}
	s.clusters[c.ClusterKey] = next
	kind := "cluster.created"
	if exists {
		kind = "cluster.updated"
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, Subject: c.ClusterKey, Source: c.Source, Detail: "allowed_source_cidrs " + strings.Join(c.CIDRs, ",")})
	return ClusterOutcome{Created: !exists, Cluster: next.clone()}, nil
}

// ClusterOutcome is the outcome of PutCluster: the cluster, and whether
// this command created it (else it replaced its networks).
type ClusterOutcome struct {
	Created bool
	Cluster Cluster
}

func (s *Store) createEnrollment(c command.CreateEnrollment) (Enrollment, error) {
	cl, ok := s.clusters[c.ClusterKey]
	if !ok {
		return Enrollment{}, fmt.Errorf("cluster %s: %w", c.ClusterKey, ErrNotFound)
	}
	ip, err := netip.ParseAddr(c.PublicIP)
	if err != nil {
		return Enrollment{}, fmt.Errorf("%w: public_ip %q", ErrInvalid, c.PublicIP)
	}
	if !cl.contains(ip) {
		return Enrollment{}, fmt.Errorf("%w: public_ip %s lies outside cluster %s's allowed_source_cidrs %s", ErrInvalid, c.PublicIP, cl.Key, strings.Join(cl.CIDRs, ","))
	}
	if _, dup := s.enrollments[c.ExternalWorkerKey]; dup {
		return Enrollment{}, fmt.Errorf("allowlist row %s exists (a revoked row stays revoked; use a new key): %w", c.ExternalWorkerKey, ErrConflict)
	}
	e := &Enrollment{Key: c.ExternalWorkerKey, ClusterKey: c.ClusterKey, PublicIP: ip.Unmap().String(), Status: enrollmentPending, CreatedAt: c.Now, CreatedBy: c.By}
	s.enrollments[e.Key] = e
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "enrollment.created", Actor: c.By, Subject: e.Key, Source: c.Source, Detail: "cluster " + e.ClusterKey + ", public_ip " + e.PublicIP})
	return *e, nil
}

func (s *Store) revokeEnrollment(c command.RevokeEnrollment) (Enrollment, error) {
	e, ok := s.enrollments[c.ExternalWorkerKey]
	if !ok {
		return Enrollment{}, fmt.Errorf("allowlist row %s: %w", c.ExternalWorkerKey, ErrNotFound)
	}
	if e.Status == enrollmentRevoked {
		return *e, nil
	}
	e.Status, e.RevokedAt, e.RevokedBy = enrollmentRevoked, c.Now, c.By
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "enrollment.revoked", Actor: c.By, Subject: e.Key, WorkerID: e.WorkerID, Source: c.Source, Detail: "cluster " + e.ClusterKey})
	if w, ok := s.workers[e.WorkerID]; ok && w.Status != workerRevoked {
		s.revokeWorkerLocked(w, c.By, c.Source, "allowlist row "+e.Key+" revoked", c.Now)
	}
	return *e, nil
}

// EnrollCheck is what the enroll handler checks before proposing, so that
// refusals cost no Raft write; the state machine checks again when the
// enrollment applies. It returns the refusal (ErrEnrollmentRefused or
// ErrConflict) and, for the audit log, the precise reason.
func (s *Store) EnrollCheck(clusterKey, key string, source netip.Addr) (reason string, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.enrollCheck(clusterKey, key, source)
}

func (s *Store) enrollCheck(clusterKey, key string, source netip.Addr) (string, error) {
	cl, ok := s.clusters[clusterKey]
	if !ok {
		return "no such cluster", ErrEnrollmentRefused
	}
	e, ok := s.enrollments[key]
	switch {
	case !ok:
		return "no allowlist row for this key", ErrEnrollmentRefused
	case e.ClusterKey != clusterKey:
		return "the allowlist row belongs to another cluster", ErrEnrollmentRefused
	case e.Status == enrollmentRevoked:
		return "the allowlist row is revoked", ErrEnrollmentRefused
	case !source.IsValid() || source.Unmap().String() != e.PublicIP:
		return "source address " + source.String() + " is not the row's public_ip " + e.PublicIP, ErrEnrollmentRefused
	case !cl.contains(source):
		return "source address " + source.String() + " is outside the cluster's networks", ErrEnrollmentRefused
	case e.Status == enrollmentEnrolled:
		return "the allowlist row is already enrolled as worker " + e.WorkerID, ErrConflict
	}
	return "", nil
}

// refusal is the message a refused enroller gets: it says what must match,
// not which part did not (the audit log says that).
const refusal = "no allowlist entry matches this cluster key, external worker key and source address"

func (s *Store) enrollWorker(c command.EnrollWorker) (RegisterOutcome, error) {
	ev := command.AuditEvent{Time: c.Now, Kind: "enrollment.refused", Subject: c.ExternalWorkerKey, Source: c.SourceIP, Route: "POST /v1/workers/enroll"}
	source, _ := netip.ParseAddr(c.SourceIP)
	if reason, err := s.enrollCheck(c.ClusterKey, c.ExternalWorkerKey, source); err != nil {
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
	if _, dup := s.credentials[c.Credential.ID]; dup {
		return RegisterOutcome{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	e := s.enrollments[c.ExternalWorkerKey]
	w := &Worker{
		ID:           c.WorkerID,
		Status:       workerReady,
		Labels:       c.Labels,
		Capabilities: c.Capabilities,
		Executors:    c.Executors,
		Devices:      c.Devices,
		// What it enrolls with is its approved inventory, as at
		// registration (RegisterWorker).
		ApprovedDevices:   inventoryOf(c.Devices),
		ApprovedIdentity:  identitiesOf(c.Devices),
		CredentialID:      c.Credential.ID,
		RegisteredAt:      c.Now,
		RegisteredBy:      "enrollment:" + e.Key,
		Origin:            originEnrollment,
		ClusterKey:        e.ClusterKey,
		ExternalWorkerKey: e.Key,
		active:            map[string]struct{}{},
	}
	cred := c.Credential
	cred.WorkerID = w.ID
	s.credentials[cred.ID] = &Credential{CredentialRecord: cred}
	s.putWorker(w) // gangtopology_index.go
	e.Status, e.WorkerID, e.EnrolledAt = enrollmentEnrolled, w.ID, c.Now
	ev.Kind, ev.WorkerID, ev.CredentialID, ev.CredentialKind = "enrollment.accepted", w.ID, cred.ID, kindWorker
	ev.Detail = "cluster " + e.ClusterKey
	s.audit.Record(ev)
	s.markPending()
	return RegisterOutcome{Created: true, Worker: s.workerRecord(w)}, nil
}

// WorkerCluster returns the enrollment cluster of a worker that enrolled
// through the allowlist ("" for any other worker).
func (s *Store) WorkerCluster(workerID string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if w, ok := s.workers[workerID]; ok {
		return w.ClusterKey
	}
	return ""
}

func (s *Store) sortedEnrollmentKeys() []string {
	keys := make([]string, 0, len(s.enrollments))
	for k := range s.enrollments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clusters lists the enrollment clusters by key.
func (s *Store) Clusters() []Cluster {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.clusters))
	for k := range s.clusters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Cluster, len(keys))
	for i, k := range keys {
		out[i] = s.clusters[k].clone()
	}
	return out
}

// Cluster returns one enrollment cluster.
func (s *Store) Cluster(key string) (Cluster, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.clusters[key]
	if !ok {
		return Cluster{}, fmt.Errorf("cluster %s: %w", key, ErrNotFound)
	}
	return c.clone(), nil
}

// Enrollments lists the allowlist rows by key.
func (s *Store) Enrollments() []Enrollment {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Enrollment{}
	for _, k := range s.sortedEnrollmentKeys() {
		out = append(out, *s.enrollments[k])
	}
	return out
}

// Enrollment returns one allowlist row.
func (s *Store) Enrollment(key string) (Enrollment, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.enrollments[key]
	if !ok {
		return Enrollment{}, fmt.Errorf("allowlist row %s: %w", key, ErrNotFound)
	}
	return *e, nil
}
