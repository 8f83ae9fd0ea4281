package state

import (
	"bytes"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
)

// securityScenario is a log that fills the tables the other scenarios
// leave empty: tokens, an enrollment cluster and its allowlist, an
// enrolled worker, an artifact record and both audit rings.
func securityScenario() []command.Command {
	join := cred("j1", "join")
	join.MaxUses, join.Groups, join.Labels = 2, []string{"pool"}, map[string]string{"zone": "a"}
	return []command.Command{
		command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{cred("adm", "client")}, Now: t0},
		mkGroup("pool"),
		command.CreateToken{Credential: join, Now: t0},
		command.RegisterWorker{WorkerID: "w1", Credential: cred("wc-w1", "worker"), TokenID: "j1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: gpus("GPU-1"), Now: at(1)},
		command.PutCluster{ClusterKey: "lab", CIDRs: []string{"10.0.0.0/8", "2001:db8::/32"}, By: "admin", Now: at(2)},
		command.CreateEnrollment{ClusterKey: "lab", ExternalWorkerKey: "vm-1", PublicIP: "10.0.0.9", By: "admin", Now: at(2)},
		command.EnrollWorker{ClusterKey: "lab", ExternalWorkerKey: "vm-1", SourceIP: "10.0.0.9", WorkerID: "w2", Credential: cred("wc-w2", "worker"),
			Capabilities: []string{}, Executors: []string{"exec"}, Devices: []command.Device{}, Now: at(3)},
		command.RecordArtifact{Digest: "ab", Size: 2, NodeID: "c1", By: "admin", Now: at(4)},
		command.AppendAudit{Events: []command.AuditEvent{{Time: at(5), Kind: "auth.refused", Source: "192.0.2.1", Count: 3}}},
		command.RevokeToken{TokenID: "j1", By: "admin", Now: at(6)},
	}
}

// FuzzRestore feeds arbitrary bytes to Restore, as a corrupt or hostile
// Raft snapshot would, in either format (version 2 or version 1 JSON). Restore must never panic. When it accepts the
// bytes, the state it built must survive a round trip: its snapshot,
// restored into a fresh store, snapshots to the same bytes.
//
// The seeds are real snapshots, in both formats, of stores built by
// applying the test scenarios, so the fuzzer starts from every table the format has.
func FuzzRestore(f *testing.F) {
	for _, log := range [][]command.Command{nil, scenario(), identityScenario(), securityScenario()} {
		s := New()
		for _, c := range log {
			s.Apply(c)
		}
		var buf bytes.Buffer
		if err := s.Snapshot(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(encodeV1(f, s.Capture()))
	}
	f.Add([]byte(snapcodec.Magic + "\x02"))
	f.Add([]byte(snapcodec.Magic + "\x02\x01\x80\x00"))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"clusters":[{"key":"k","cidrs":["not a cidr"]}]}`))
	f.Add([]byte(`{"version":1} trailing`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New()
		if err := s.Restore(bytes.NewReader(b)); err != nil {
			return
		}
		first := snapshotBytes(t, s)
		r := New()
		if err := r.Restore(bytes.NewReader(first)); err != nil {
			t.Fatalf("a store's own snapshot does not restore: %v\n%q", err, first)
		}
		if second := snapshotBytes(t, r); !bytes.Equal(first, second) {
			t.Fatalf("snapshot, restore, snapshot changed the bytes:\n%q\n---\n%q", first, second)
		}
	})
}
