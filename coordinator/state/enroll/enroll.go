// Package enroll is the allowlist enrollment's room: clusters (the
// networks a cluster's workers enroll from) and allowlist rows (one
// worker's key and public address, pending → enrolled, or revoked for
// good), and the check an enrollment must pass. The state applies the
// enrollment commands through it, creates the enrolled worker and its
// credential, revokes a revoked row's worker, and audits each change. It
// knows no other room but the state's sentinel errors.
package enroll

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Row statuses.
const (
	Pending  = "pending"
	Enrolled = "enrolled"
	Revoked  = "revoked"
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

// ClusterOutcome is the outcome of PutCluster: the cluster, and whether
// this command created it (else it replaced its networks).
type ClusterOutcome struct {
	Created bool
	Cluster Cluster
}

// parsePrefixes parses canonical CIDRs; the handler has checked them, so a
// failure here means a bad command.
func parsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("%w: cidr %q", stateerr.ErrInvalid, c)
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

func (c *Cluster) clone() Cluster {
	out := *c
	out.CIDRs = slices.Clone(c.CIDRs)
	out.prefixes = slices.Clone(c.prefixes)
	return out
}

// Table is the clusters and the allowlist rows. It follows its owner's
// locking: writes under the write lock (inside Apply), reads under the
// read lock.
type Table struct {
	clusters map[string]*Cluster
	rows     map[string]*Enrollment
}

// New returns an empty table.
func New() *Table { return &Table{clusters: map[string]*Cluster{}, rows: map[string]*Enrollment{}} }

// Restore returns a table of clusters and rows, as a snapshot lists them.
func Restore(clusters []*Cluster, rows []*Enrollment) (*Table, error) {
	t := New()
	for _, c := range clusters {
		if c == nil {
			return nil, fmt.Errorf("empty cluster: %w", stateerr.ErrInvalid)
		}
		p, err := parsePrefixes(c.CIDRs)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Key, err)
		}
		c.prefixes = p
		t.clusters[c.Key] = c
	}
	for _, e := range rows {
		if e == nil {
			return nil, fmt.Errorf("empty enrollment: %w", stateerr.ErrInvalid)
		}
		t.rows[e.Key] = e
	}
	return t, nil
}

// PutCluster creates cluster key with cidrs or replaces its networks,
// refusing networks that would leave a live row outside them.
func (t *Table) PutCluster(key string, cidrs []string, by string, now time.Time) (ClusterOutcome, error) {
	prefixes, err := parsePrefixes(cidrs)
	if err != nil {
		return ClusterOutcome{}, err
	}
	if len(prefixes) == 0 {
		return ClusterOutcome{}, fmt.Errorf("%w: a cluster needs at least one source network", stateerr.ErrInvalid)
	}
	cl, exists := t.clusters[key]
	next := &Cluster{Key: key, CIDRs: slices.Clone(cidrs), CreatedAt: now, CreatedBy: by, UpdatedAt: now, prefixes: prefixes}
	if exists {
		next.CreatedAt, next.CreatedBy = cl.CreatedAt, cl.CreatedBy
		var outside []string
		for _, k := range slices.Sorted(maps.Keys(t.rows)) {
			e := t.rows[k]
			if e.ClusterKey == key && e.Status != Revoked && !next.contains(netip.MustParseAddr(e.PublicIP)) {
				outside = append(outside, k)
			}
		}
		if len(outside) > 0 {
			return ClusterOutcome{}, fmt.Errorf("allowlist rows %s would lie outside cluster %s's networks; revoke them first: %w", strings.Join(outside, ","), key, stateerr.ErrConflict)
		}
	}
	t.clusters[key] = next
	return ClusterOutcome{Created: !exists, Cluster: next.clone()}, nil
}

// CreateRow adds a pending row for key in cluster at publicIP, which must
// lie inside the cluster's networks. A key is never used twice.
func (t *Table) CreateRow(clusterKey, key, publicIP, by string, now time.Time) (Enrollment, error) {
	cl, ok := t.clusters[clusterKey]
	if !ok {
		return Enrollment{}, fmt.Errorf("cluster %s: %w", clusterKey, stateerr.ErrNotFound)
	}
	ip, err := netip.ParseAddr(publicIP)
	if err != nil {
		return Enrollment{}, fmt.Errorf("%w: public_ip %q", stateerr.ErrInvalid, publicIP)
	}
	if !cl.contains(ip) {
		return Enrollment{}, fmt.Errorf("%w: public_ip %s lies outside cluster %s's allowed_source_cidrs %s", stateerr.ErrInvalid, publicIP, cl.Key, strings.Join(cl.CIDRs, ","))
	}
	if _, dup := t.rows[key]; dup {
		return Enrollment{}, fmt.Errorf("allowlist row %s exists (a revoked row stays revoked; use a new key): %w", key, stateerr.ErrConflict)
	}
	e := &Enrollment{Key: key, ClusterKey: clusterKey, PublicIP: ip.Unmap().String(), Status: Pending, CreatedAt: now, CreatedBy: by}
	t.rows[key] = e
	return *e, nil
}

// RevokeRow revokes row key; changed is false when it was revoked already.
func (t *Table) RevokeRow(key, by string, now time.Time) (row Enrollment, changed bool, err error) {
	e, ok := t.rows[key]
	if !ok {
		return Enrollment{}, false, fmt.Errorf("allowlist row %s: %w", key, stateerr.ErrNotFound)
	}
	if e.Status == Revoked {
		return *e, false, nil
	}
	e.Status, e.RevokedAt, e.RevokedBy = Revoked, now, by
	return *e, true, nil
}

// Check says whether a worker may enroll now as row key of cluster from
// source: the refusal (ErrEnrollmentRefused, or ErrConflict for a row
// enrolled already) and, for the audit log, the precise reason.
func (t *Table) Check(clusterKey, key string, source netip.Addr) (reason string, err error) {
	cl, ok := t.clusters[clusterKey]
	if !ok {
		return "no such cluster", stateerr.ErrEnrollmentRefused
	}
	e, ok := t.rows[key]
	switch {
	case !ok:
		return "no allowlist row for this key", stateerr.ErrEnrollmentRefused
	case e.ClusterKey != clusterKey:
		return "the allowlist row belongs to another cluster", stateerr.ErrEnrollmentRefused
	case e.Status == Revoked:
		return "the allowlist row is revoked", stateerr.ErrEnrollmentRefused
	case !source.IsValid() || source.Unmap().String() != e.PublicIP:
		return "source address " + source.String() + " is not the row's public_ip " + e.PublicIP, stateerr.ErrEnrollmentRefused
	case !cl.contains(source):
		return "source address " + source.String() + " is outside the cluster's networks", stateerr.ErrEnrollmentRefused
	case e.Status == Enrolled:
		return "the allowlist row is already enrolled as worker " + e.WorkerID, stateerr.ErrConflict
	}
	return "", nil
}

// MarkEnrolled records that row key, which passed Check, enrolled as
// worker, and returns it.
func (t *Table) MarkEnrolled(key, workerID string, now time.Time) Enrollment {
	e := t.rows[key]
	e.Status, e.WorkerID, e.EnrolledAt = Enrolled, workerID, now
	return *e
}

// Contains reports whether cluster key's networks hold ip.
func (t *Table) Contains(clusterKey string, ip netip.Addr) bool {
	c, ok := t.clusters[clusterKey]
	return ok && ip.IsValid() && c.contains(ip)
}

// Copies lists a copy of every cluster and row, in no set order (a
// snapshot's capture, under the state's locks: its encoding sorts them).
func (t *Table) Copies() (clusters []Cluster, rows []Enrollment) {
	return t.clusterCopies(), t.rowCopies()
}

func (t *Table) clusterCopies() []Cluster {
	out := make([]Cluster, 0, len(t.clusters))
	for _, c := range t.clusters {
		out = append(out, c.clone())
	}
	return out
}

func (t *Table) rowCopies() []Enrollment {
	out := make([]Enrollment, 0, len(t.rows))
	for _, e := range t.rows {
		out = append(out, *e)
	}
	return out
}

// Clusters lists the clusters by key.
func (t *Table) Clusters() []Cluster {
	out := t.clusterCopies()
	slices.SortFunc(out, func(a, b Cluster) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Cluster returns one cluster.
func (t *Table) Cluster(key string) (Cluster, error) {
	c, ok := t.clusters[key]
	if !ok {
		return Cluster{}, fmt.Errorf("cluster %s: %w", key, stateerr.ErrNotFound)
	}
	return c.clone(), nil
}

// Rows lists the allowlist rows by key.
func (t *Table) Rows() []Enrollment {
	out := t.rowCopies()
	slices.SortFunc(out, func(a, b Enrollment) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Row returns one allowlist row.
func (t *Table) Row(key string) (Enrollment, error) {
	e, ok := t.rows[key]
	if !ok {
		return Enrollment{}, fmt.Errorf("allowlist row %s: %w", key, stateerr.ErrNotFound)
	}
	return *e, nil
}
