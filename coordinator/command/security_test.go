package command

import (
	"testing"
	"time"
)

func TestSecurityRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	join := CredentialRecord{ID: "c1", Kind: "join", Name: "fleet", Hash: "h", CreatedAt: now, ExpiresAt: now.Add(time.Hour), CreatedBy: "admin",
		MaxUses: 1, RequiresApproval: true, Groups: []string{"g"}, Labels: map[string]string{"zone": "a"}}
	cases := []Command{
		CreateToken{Credential: join, Source: "192.0.2.1", Now: now},
		CreateToken{Credential: CredentialRecord{ID: "c2", Kind: "instance", Name: "instance", Hash: "h", CreatedAt: now, MaxUses: 1, InstanceID: "i-1"}, Now: now},
		RevokeToken{TokenID: "c1", By: "admin", Source: "192.0.2.1", Now: now},
		ApproveWorker{WorkerID: "w1", By: "admin", Now: now},
		RegisterWorker{WorkerID: "w1", Credential: CredentialRecord{ID: "c3", Kind: "worker", Hash: "h", CreatedAt: now}, TokenID: "c2", Origin: "provider", InstanceID: "i-1", Source: "192.0.2.9",
			Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []Device{}, Now: now},
		PutCluster{ClusterKey: "lab", CIDRs: []string{"10.0.0.0/8"}, By: "admin", Now: now},
		CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "vm-1", PublicIP: "10.1.2.3", By: "admin", Now: now},
		RevokeEnrollment{ExternalWorkerKey: "vm-1", By: "admin", Now: now},
		EnrollWorker{ClusterKey: "lab", ExternalWorkerKey: "vm-1", SourceIP: "10.1.2.3", WorkerID: "w2", Credential: CredentialRecord{ID: "c4", Kind: "worker", Hash: "h", CreatedAt: now},
			Capabilities: []string{}, Executors: []string{"exec"}, Devices: []Device{}, Now: now},
		AppendAudit{Events: []AuditEvent{{Time: now, Kind: "auth.refused", CredentialID: "c9", Source: "192.0.2.3", Route: "GET /v1/jobs", Code: "unauthenticated", Count: 7}}},
		RecordArtifact{Digest: "ab", Size: 3, NodeID: "c1", By: "admin", Now: now},
		CancelJob{JobID: "j", By: "admin", Now: now, Source: "192.0.2.1"},
	}
	assertRoundTrip(t, cases)
}
