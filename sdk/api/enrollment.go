package api

// Allowlist row states.
const (
	EnrollmentPending  = "pending"
	EnrollmentEnrolled = "enrolled"
	EnrollmentRevoked  = "revoked"
)

// ClusterRequest is the body of POST /v1/clusters: it creates the cluster
// or replaces its allowed source CIDRs.
type ClusterRequest struct {
	ClusterKey         string   `json:"cluster_key"`
	AllowedSourceCIDRs []string `json:"allowed_source_cidrs"`
}

// Cluster is a set of source networks that allowlisted workers enroll
// from.
type Cluster struct {
	ClusterKey         string   `json:"cluster_key"`
	AllowedSourceCIDRs []string `json:"allowed_source_cidrs"`
	Status             string   `json:"status"`
	CreatedAt          string   `json:"created_at"`
	CreatedBy          string   `json:"created_by,omitempty"`
	UpdatedAt          string   `json:"updated_at"`
}

// ClusterResponse wraps one cluster.
type ClusterResponse struct {
	Cluster Cluster `json:"cluster"`
}

// ClusterList answers GET /v1/clusters.
type ClusterList struct {
	Clusters []Cluster `json:"clusters"`
}

// EnrollmentRequest is the body of POST /v1/enrollments: one allowlist
// row.
type EnrollmentRequest struct {
	ClusterKey        string `json:"cluster_key"`
	ExternalWorkerKey string `json:"external_worker_key"`
	PublicIP          string `json:"public_ip"`
}

// Enrollment is one allowlist row.
type Enrollment struct {
	ExternalWorkerKey string `json:"external_worker_key"`
	ClusterKey        string `json:"cluster_key"`
	PublicIP          string `json:"public_ip"`
	Status            string `json:"status"`
	WorkerID          string `json:"worker_id,omitempty"`
	CreatedAt         string `json:"created_at"`
	CreatedBy         string `json:"created_by,omitempty"`
	EnrolledAt        string `json:"enrolled_at,omitempty"`
	RevokedAt         string `json:"revoked_at,omitempty"`
	RevokedBy         string `json:"revoked_by,omitempty"`
}

// EnrollmentResponse wraps one allowlist row.
type EnrollmentResponse struct {
	Enrollment Enrollment `json:"enrollment"`
}

// EnrollmentList answers GET /v1/enrollments.
type EnrollmentList struct {
	Enrollments []Enrollment `json:"enrollments"`
}

// EnrollRequest is the body of POST /v1/workers/enroll, which carries no
// bearer token: the allowlist row, its cluster and the caller's source
// address decide. The answer is a RegisterResponse.
type EnrollRequest struct {
	ClusterKey        string            `json:"cluster_key"`
	ExternalWorkerKey string            `json:"external_worker_key"`
	WorkerID          string            `json:"worker_id,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Capabilities      []string          `json:"capabilities,omitempty"`
	Executors         []string          `json:"executors,omitempty"`
	Devices           []Device          `json:"devices,omitempty"`
	// PublicIP is accepted and ignored: the source address is taken from
	// the connection (or a trusted proxy), never from the body.
	PublicIP string `json:"public_ip,omitempty"`
}
