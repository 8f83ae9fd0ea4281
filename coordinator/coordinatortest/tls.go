package coordinatortest

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/internal/certs"
)

// TLS is a cluster CA and a server certificate every coordinator of a test
// shares. Set Options.TLS to run a harness or cluster with TLS on every
// link: HTTPS for clients, mutual TLS for Raft and between coordinators.
type TLS struct {
	Cluster  string
	Dir      string
	CAFile   string
	CertFile string
	KeyFile  string
	CA       *certs.CA

	issued atomic.Int64
}

// NewTLS makes a CA for cluster and one server certificate from it.
func NewTLS(t testing.TB, cluster string) *TLS {
	t.Helper()
	dir := t.TempDir()
	p, err := certs.NewCA(certs.CAOptions{Cluster: cluster, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCA(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, certs.CAFile)
	if err := os.WriteFile(caFile, p.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	f := &TLS{Cluster: cluster, Dir: dir, CAFile: caFile, CA: ca}
	f.CertFile, f.KeyFile = f.Issue(t, certs.Server, cluster)
	return f
}

// Issue signs another certificate with this CA, for cluster (which may
// differ from the CA's, to test that peers check the name).
func (f *TLS) Issue(t testing.TB, kind certs.Kind, cluster string) (certFile, keyFile string) {
	t.Helper()
	p, err := certs.NewCert(f.CA, certs.CertOptions{Kind: kind, Cluster: cluster, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(f.Dir, "leaf"+strconv.FormatInt(f.issued.Add(1), 10))
	certFile, keyFile = prefix+".pem", prefix+"-key.pem"
	if err := certs.WriteNew(p, certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// apply turns on HTTPS and peer TLS in cfg.
func (f *TLS) apply(cfg *coordinator.Config) {
	if f == nil {
		return
	}
	cfg.TLSCert, cfg.TLSKey = f.CertFile, f.KeyFile
	cfg.RaftTLSCert, cfg.RaftTLSKey, cfg.RaftCAFile = f.CertFile, f.KeyFile, f.CAFile
	cfg.ClusterName = f.Cluster
}

func (f *TLS) scheme() string {
	if f == nil {
		return "http://"
	}
	return "https://"
}

func (f *TLS) caFile() string {
	if f == nil {
		return ""
	}
	return f.CAFile
}
