package command

import (
	"time"
)

// PutCluster creates an enrollment cluster or replaces its allowed source
// CIDRs (canonical prefixes, sorted). A replacement that would leave a
// live allowlist row outside the cluster's networks is refused.
type PutCluster struct {
	ClusterKey string    `json:"cluster_key"`
	CIDRs      []string  `json:"cidrs"`
	By         string    `json:"by"`
	Source     string    `json:"source,omitempty"`
	Now        time.Time `json:"now"`
}

// CreateEnrollment adds a pending allowlist row. Its public IP must lie in
// its cluster's networks.
type CreateEnrollment struct {
	ClusterKey        string    `json:"cluster_key"`
	ExternalWorkerKey string    `json:"external_worker_key"`
	PublicIP          string    `json:"public_ip"`
	By                string    `json:"by"`
	Source            string    `json:"source,omitempty"`
	Now               time.Time `json:"now"`
}

// RevokeEnrollment revokes an allowlist row for good, and the worker that
// enrolled through it.
type RevokeEnrollment struct {
	ExternalWorkerKey string    `json:"external_worker_key"`
	By                string    `json:"by"`
	Source            string    `json:"source,omitempty"`
	Now               time.Time `json:"now"`
}

// EnrollWorker redeems an allowlist row: the state machine checks the
// cluster, the row and the source address the leader determined, and
// creates the worker with the credential the leader minted, all in one
// step. Every decision, accepted or refused, is audited.
type EnrollWorker struct {
	ClusterKey        string            `json:"cluster_key"`
	ExternalWorkerKey string            `json:"external_worker_key"`
	SourceIP          string            `json:"source_ip"`
	WorkerID          string            `json:"worker_id"`
	Credential        CredentialRecord  `json:"credential"`
	Labels            map[string]string `json:"labels,omitempty"`
	Capabilities      []string          `json:"capabilities"`
	Executors         []string          `json:"executors"`
	Devices           []Device          `json:"devices"`
	Now               time.Time         `json:"now"`
}

func (PutCluster) Type() Type       { return TypePutCluster }
func (CreateEnrollment) Type() Type { return TypeCreateEnrollment }
func (RevokeEnrollment) Type() Type { return TypeRevokeEnrollment }
func (EnrollWorker) Type() Type     { return TypeEnrollWorker }
