package coordinator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/certs"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Three coordinators with TLS on every link (HTTPS, Raft over mutual TLS,
// forwarding over mutual TLS) form a cluster, elect a leader, replicate,
// and answer writes sent to a follower.
func TestClusterOverTLS(t *testing.T) {
	files := coordinatortest.NewTLS(t, "prod")
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{TLS: files})
	leader := c.WaitLeader(15 * time.Second)
	var ids []string
	for _, n := range c.Nodes {
		if n == leader {
			continue
		}
		if !strings.HasPrefix(n.URL, "https://") {
			t.Fatalf("node URL %s is not HTTPS", n.URL)
		}
		cl, err := client.New(client.Config{Addrs: []string{n.URL}, Token: c.AdminToken, CAFile: files.CAFile})
		if err != nil {
			t.Fatal(err)
		}
		job, err := cl.SubmitJob(t.Context(), execJob())
		if err != nil {
			t.Fatalf("a write through follower %s: %v", n.ID, err)
		}
		ids = append(ids, job.ID)
	}
	c.Converged(10 * time.Second)
	for _, n := range c.Nodes {
		for _, id := range ids {
			if _, err := n.Server().Store().Job(id); err != nil {
				t.Fatalf("%s does not hold job %s: %v", n.ID, id, err)
			}
		}
	}
}

// On the HTTPS port, a connection that asks for the cluster's server name
// (as coordinators do when they forward) must show a coordinator's
// certificate; clients asking for the address are served as before.
func TestPeerHTTPSNeedsCoordinatorCertificate(t *testing.T) {
	files := coordinatortest.NewTLS(t, "global")
	h := coordinatortest.Start(t, coordinatortest.Options{TLS: files})
	addr := strings.TrimPrefix(h.URL, "https://")
	clientCert, clientKey := files.Issue(t, certs.Client, "global")
	load := func(cert, key string) []tls.Certificate {
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{kp}
	}
	cases := []struct {
		name   string
		sni    string
		certs  []tls.Certificate
		served bool
	}{
		{"client by address, no certificate", "", nil, true},
		{"peer name, no certificate", certs.ServerName("global"), nil, false},
		{"peer name, client certificate", certs.ServerName("global"), load(clientCert, clientKey), false},
		{"peer name, coordinator certificate", certs.ServerName("global"), load(files.CertFile, files.KeyFile), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conf := &tls.Config{ServerName: tc.sni, Certificates: tc.certs, InsecureSkipVerify: true}
			hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: conf}}
			resp, err := hc.Get("https://" + addr + "/v1/status/leader")
			if err == nil {
				resp.Body.Close()
			}
			if served := err == nil && resp.StatusCode == http.StatusOK; served != tc.served {
				t.Fatalf("served=%v (%v), want %v", served, err, tc.served)
			}
		})
	}
}

// A coordinator refuses to start with plaintext Raft on a non-loopback
// bind or advertise address, unless told --allow-insecure-raft; and it
// refuses peer certificates that peers would refuse.
func TestRaftTLSStartChecks(t *testing.T) {
	files := coordinatortest.NewTLS(t, "global")
	clientCert, clientKey := files.Issue(t, certs.Client, "global")
	otherCert, otherKey := files.Issue(t, certs.Server, "other")
	rogue := coordinatortest.NewTLS(t, "global")
	free := coordinatortest.FreeAddr(t)
	port := free[strings.LastIndex(free, ":"):]
	cases := []struct {
		name    string
		cfg     func(*coordinator.Config)
		wantErr error
		refused bool
	}{
		{"all interfaces, no TLS", func(c *coordinator.Config) { c.RaftAddr = "0.0.0.0" + port; c.RaftAdvertise = "127.0.0.1" + port }, coordinator.ErrInsecureRaft, true},
		{"remote advertise, no TLS", func(c *coordinator.Config) { c.RaftAdvertise = "c1" + port }, coordinator.ErrInsecureRaft, true},
		{"remote bind, no TLS", func(c *coordinator.Config) { c.RaftAddr = "192.0.2.1" + port }, coordinator.ErrInsecureRaft, true},
		{"cert without CA", func(c *coordinator.Config) { c.RaftTLSCert, c.RaftTLSKey = files.CertFile, files.KeyFile }, nil, true},
		{"client certificate", func(c *coordinator.Config) {
			c.RaftTLSCert, c.RaftTLSKey, c.RaftCAFile = clientCert, clientKey, files.CAFile
		}, nil, true},
		{"certificate of another cluster", func(c *coordinator.Config) {
			c.RaftTLSCert, c.RaftTLSKey, c.RaftCAFile = otherCert, otherKey, files.CAFile
		}, nil, true},
		{"certificate of another CA", func(c *coordinator.Config) {
			c.RaftTLSCert, c.RaftTLSKey, c.RaftCAFile = rogue.CertFile, rogue.KeyFile, files.CAFile
		}, nil, true},
		{"bad cluster name", func(c *coordinator.Config) { c.ClusterName = "Not.A.Label" }, certs.ErrClusterName, true},
		{"loopback, no TLS", func(*coordinator.Config) {}, nil, false},
		{"all interfaces, insecure allowed", func(c *coordinator.Config) {
			c.RaftAddr, c.RaftAdvertise, c.AllowInsecureRaft = "0.0.0.0"+port, "127.0.0.1"+port, true
		}, nil, false},
		{"all interfaces, TLS", func(c *coordinator.Config) {
			c.RaftAddr, c.RaftAdvertise = "0.0.0.0"+port, "127.0.0.1"+port
			c.RaftTLSCert, c.RaftTLSKey, c.RaftCAFile = files.CertFile, files.KeyFile, files.CAFile
		}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := coordinator.Init(dir, false, time.Now()); err != nil {
				t.Fatal(err)
			}
			cfg := coordinator.Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1" + port}
			tc.cfg(&cfg)
			srv, err := coordinator.New(cfg)
			if !tc.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- srv.Run(ctx) }()
				coordinatortest.WaitFor(t, 10*time.Second, "the coordinator to lead", srv.LeaderReady)
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("started")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}
