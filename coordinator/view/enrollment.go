package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Cluster renders an enrollment cluster.
func Cluster(c enroll.Cluster) api.Cluster {
	return api.Cluster{ClusterKey: c.Key, AllowedSourceCIDRs: c.CIDRs, Status: "active", CreatedAt: api.FormatTime(c.CreatedAt), CreatedBy: c.CreatedBy, UpdatedAt: api.FormatTime(c.UpdatedAt)}
}

// Clusters renders a list of clusters, in its order.
func Clusters(cs []enroll.Cluster) []api.Cluster {
	return each(cs, Cluster)
}

// Enrollment renders an allowlist row.
func Enrollment(e enroll.Enrollment) api.Enrollment {
	return api.Enrollment{
		ExternalWorkerKey: e.Key, ClusterKey: e.ClusterKey, PublicIP: e.PublicIP, Status: e.Status, WorkerID: e.WorkerID,
		CreatedAt: api.FormatTime(e.CreatedAt), CreatedBy: e.CreatedBy, EnrolledAt: api.FormatTime(e.EnrolledAt),
		RevokedAt: api.FormatTime(e.RevokedAt), RevokedBy: e.RevokedBy,
	}
}

// Enrollments renders a list of allowlist rows, in its order.
func Enrollments(es []enroll.Enrollment) []api.Enrollment {
	return each(es, Enrollment)
}
