package fsm_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/bench/stategen"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// goldenSnapshot is the SHA-256 of the snapshot goldenState encodes to.
// A change to the snapshot's bytes must be meant: a replica that restores
// an older snapshot must read it as it was written (the restore tests
// say how older formats read), so when this fails, say in the change
// why the bytes moved and write the new digest here.
const goldenSnapshot = "d9f9e8f4a80e50fec2e72a45dd466623073037e0196c507687e72c54ec1ff2a9"

// goldenState is a state with a row in every table: metered jobs of two
// teams and two users on 20 workers, a group, an enrollment cluster and
// row, client and join tokens, an artifact and coalesced refusals.
func goldenState(t *testing.T) *state.Store {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"command": "true"})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := stategen.Build(stategen.Options{
		NodeID: "n1", NodeURL: "http://n1", Workers: 20, Tasks: 600, LogLine: "hello\n",
		Spec: command.JobSpec{Name: "golden", Executor: "exec", Config: cfg, Count: 1, IdempotencyKey: "k", Resources: &command.Resources{GPUs: 1}},
		Devices: func(id string) []command.Device {
			return []command.Device{{UUID: "GPU-" + id, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}}
		},
		Metered: true, RunFor: 90 * time.Minute, Spacing: time.Minute, Teams: []string{"a", "b"}, Users: []string{"u1", "u2"},
		Bootstrap: stategen.Bootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "h-adm", CreatedAt: t0}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := int64(1 << 30)
	for _, c := range []command.Command{
		command.CreateGroup{GroupID: "g", Members: []command.GroupMember{{Kind: "worker", ID: "w00001"}, {Kind: "worker", ID: "w00002"}}, By: "admin", Now: t0},
		command.PutCluster{ClusterKey: "lab", CIDRs: []string{"10.1.0.0/16"}, By: "admin", Now: t0},
		command.CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "node-1", PublicIP: "10.1.0.1", By: "admin", Now: t0},
		command.CreateToken{Credential: command.CredentialRecord{ID: "c1", Kind: "client", Name: "ci", Roles: []string{"submit"}, Hash: "h-c1", Team: "a", CreatedAt: t0, CreatedBy: "admin"}, Now: t0},
		command.CreateToken{Credential: command.CredentialRecord{ID: "j1", Kind: "join", Name: "racks", Hash: "h-j1", MaxUses: 3, Groups: []string{"g"}, CreatedAt: t0, CreatedBy: "admin"}, Now: t0},
		command.UpdateTeam{Name: "a", ArtifactQuotaBytes: &q, By: "admin", Now: t0},
		command.RecordArtifact{Digest: "ab12", Size: 42, By: "ci", NodeID: "n1", Team: "a", Scoped: true, ChargeTeam: "a", Now: t0},
		command.AppendAudit{Events: []command.AuditEvent{{Time: t0, Kind: "auth.refused", Count: 3}}},
	} {
		if res, ok := st.Apply(c).(state.Result); !ok || res.Err() != nil {
			t.Fatalf("%T: %v", c, res.Err())
		}
	}
	return st
}

// TestSnapshotBytesAreStable encodes goldenState and compares the bytes'
// digest with goldenSnapshot.
func TestSnapshotBytesAreStable(t *testing.T) {
	var b bytes.Buffer
	if err := fsm.Save(goldenState(t), &b); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	if got := hex.EncodeToString(sum[:]); got != goldenSnapshot {
		t.Fatalf("the snapshot's bytes moved: sha256 %s (%d bytes), want %s", got, b.Len(), goldenSnapshot)
	}
}
