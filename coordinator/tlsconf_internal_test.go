package coordinator

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/internal/certs"
)

// The forwarding transport accepts a leader only if its certificate
// chains to the cluster CA and carries the cluster's server name (not the
// URL's host), and it shows its own coordinator certificate.
func TestForwardTransportVerifiesLeaderIdentity(t *testing.T) {
	dir := t.TempDir()
	issue := func(ca *certs.CA, kind certs.Kind, cluster, name string) (string, string) {
		p, err := certs.NewCert(ca, certs.CertOptions{Kind: kind, Cluster: cluster, Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		cf, kf := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		if err := certs.WriteNew(p, cf, kf); err != nil {
			t.Fatal(err)
		}
		return cf, kf
	}
	newCA := func(name string) (*certs.CA, string) {
		p, err := certs.NewCA(certs.CAOptions{Cluster: "global", Days: 1})
		if err != nil {
			t.Fatal(err)
		}
		ca, err := certs.ParseCA(p.Cert, p.Key)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+"-ca.pem")
		if err := certs.WriteNew(certs.PEM{Cert: p.Cert, Key: p.Key}, f, filepath.Join(dir, name+"-ca-key.pem")); err != nil {
			t.Fatal(err)
		}
		return ca, f
	}
	ca, caFile := newCA("cluster")
	rogueCA, _ := newCA("rogue")
	selfCert, selfKey := issue(ca, certs.Server, "global", "self")
	peer, err := peerTLS(Config{RaftTLSCert: selfCert, RaftTLSKey: selfKey, RaftCAFile: caFile, ClusterName: "global"})
	if err != nil {
		t.Fatal(err)
	}
	fwd := forwardTransport(peer)
	leaderCert, leaderKey := issue(ca, certs.Server, "global", "leader")
	otherCert, otherKey := issue(ca, certs.Server, "other", "other")
	clientCert, clientKey := issue(ca, certs.Client, "global", "client")
	rogueCert, rogueKey := issue(rogueCA, certs.Server, "global", "rogue")
	cases := []struct {
		name      string
		cert, key string
		want      bool
	}{
		{"a coordinator of the cluster", leaderCert, leaderKey, true},
		{"a coordinator of another cluster", otherCert, otherKey, false},
		{"a client certificate", clientCert, clientKey, false},
		{"another CA", rogueCert, rogueKey, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := tls.LoadX509KeyPair(tc.cert, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			var shown string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if len(r.TLS.PeerCertificates) > 0 {
					shown = r.TLS.PeerCertificates[0].Subject.CommonName
				}
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{kp}, ClientAuth: tls.RequestClientCert}
			srv.StartTLS()
			defer srv.Close()
			resp, err := (&http.Client{Transport: fwd}).Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tc.want {
				t.Fatalf("forwarded=%v (%v), want %v", err == nil, err, tc.want)
			}
			if tc.want && shown != certs.ServerName("global") {
				t.Fatalf("the forwarder showed %q", shown)
			}
		})
	}
}
