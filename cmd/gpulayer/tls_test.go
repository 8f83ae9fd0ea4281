package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

func readCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mode(t *testing.T, file string) os.FileMode {
	t.Helper()
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := run(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
	}
	return r
}

// makeTLS creates a CA, a server certificate and a client certificate in
// dir with the CLI, as an operator would.
func makeTLS(t *testing.T, dir, cluster string) {
	t.Helper()
	mustRun(t, "tls", "ca", "create", "--dir", dir, "--cluster", cluster, "--days", "30")
	ca, key := filepath.Join(dir, "gpulayer-ca.pem"), filepath.Join(dir, "gpulayer-ca-key.pem")
	mustRun(t, "tls", "cert", "create", "--server", "--ca", ca, "--ca-key", key, "--cluster", cluster, "--dir", dir, "--out", "c1",
		"--additional-dnsname", "c1.example,coord", "--additional-ipaddress", "10.0.0.11", "--days", "10")
	mustRun(t, "tls", "cert", "create", "--client", "--ca", ca, "--ca-key", key, "--cluster", cluster, "--dir", dir)
}

func TestTLSCommands(t *testing.T) {
	dir := t.TempDir()
	makeTLS(t, dir, "prod")
	if m := mode(t, filepath.Join(dir, "gpulayer-ca-key.pem")); m != 0o600 {
		t.Errorf("CA key mode %v", m)
	}
	for _, k := range []string{"c1-key.pem", "prod-client-gpulayer-key.pem"} {
		if m := mode(t, filepath.Join(dir, k)); m != 0o600 {
			t.Errorf("%s mode %v", k, m)
		}
	}
	ca := readCert(t, filepath.Join(dir, "gpulayer-ca.pem"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if !ca.IsCA {
		t.Fatal("the CA is not a CA")
	}
	cases := []struct {
		file   string
		dns    []string
		ips    int
		usages []x509.ExtKeyUsage
	}{
		{"c1.pem", []string{"server.prod.gpulayer", "localhost", "c1.example", "coord"}, 2, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{"prod-client-gpulayer.pem", []string{"client.prod.gpulayer"}, 0, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	}
	for _, tc := range cases {
		c := readCert(t, filepath.Join(dir, tc.file))
		if !slices.Equal(c.DNSNames, tc.dns) || len(c.IPAddresses) != tc.ips || !slices.Equal(c.ExtKeyUsage, tc.usages) {
			t.Errorf("%s: DNS %v, IPs %v, usages %v", tc.file, c.DNSNames, c.IPAddresses, c.ExtKeyUsage)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.dns[0], KeyUsages: tc.usages[:1]}); err != nil {
			t.Errorf("%s does not verify against the CA: %v", tc.file, err)
		}
	}

	before, _ := os.ReadFile(filepath.Join(dir, "gpulayer-ca-key.pem"))
	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"CA again", []string{"tls", "ca", "create", "--dir", dir}, "refusing to overwrite"},
		{"server cert again", []string{"tls", "cert", "create", "--server", "--cluster", "prod", "--dir", dir, "--out", "c1",
			"--ca", filepath.Join(dir, "gpulayer-ca.pem"), "--ca-key", filepath.Join(dir, "gpulayer-ca-key.pem")}, "refusing to overwrite"},
		{"neither kind", []string{"tls", "cert", "create", "--dir", dir}, "--server and --client"},
		{"both kinds", []string{"tls", "cert", "create", "--server", "--client", "--dir", dir}, "--server and --client"},
		{"client with extra names", []string{"tls", "cert", "create", "--client", "--additional-dnsname", "x", "--dir", dir}, "--server"},
		{"bad IP", []string{"tls", "cert", "create", "--server", "--additional-ipaddress", "not-an-ip", "--dir", dir}, "not an IP"},
		{"bad cluster", []string{"tls", "ca", "create", "--dir", t.TempDir(), "--cluster", "Bad.Name"}, "cluster name"},
		{"no CA", []string{"tls", "cert", "create", "--server", "--dir", t.TempDir(), "--ca", filepath.Join(t.TempDir(), "none.pem")}, "tls ca create"},
	}
	for _, tc := range refusals {
		r := run(t, nil, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want it to mention %q", tc.name, r.code, r.stderr, tc.want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "gpulayer-ca-key.pem")); !bytes.Equal(before, after) {
		t.Fatal("a refused command changed the CA key")
	}
}

// startCoordinator runs `gpulayer coordinator run` with args until the
// test ends and returns its stderr buffer.
func startCoordinator(t *testing.T, args ...string) *lockedBuffer {
	t.Helper()
	return startBinary(t, append([]string{"coordinator", "run"}, args...)...).stderr
}

// waitCoordinatorLeads polls GET /v1/status/leader until the coordinator names one.
func waitCoordinatorLeads(t *testing.T, hc *http.Client, url string, stderr *lockedBuffer) {
	t.Helper()
	coordinatortest.WaitFor(t, 30*time.Second, "the coordinator to lead", func() bool {
		if strings.Contains(stderr.String(), "gpulayer:") {
			t.Fatalf("the coordinator failed:\n%s", stderr.String())
		}
		resp, err := hc.Get(url + "/v1/status/leader")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var out struct {
			LeaderID string `json:"leader_id"`
		}
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&out) == nil && out.LeaderID != ""
	})
}

// A coordinator started from the CLI with the certificates `gpulayer tls`
// made serves HTTPS and runs Raft over mutual TLS on all interfaces.
func TestCoordinatorRunsWithGeneratedCertificates(t *testing.T) {
	dir := t.TempDir()
	makeTLS(t, dir, "global")
	data := t.TempDir()
	mustRun(t, "coordinator", "init", "--data-dir", data)
	httpAddr, raftAddr := coordinatortest.FreeAddr(t), coordinatortest.FreeAddr(t)
	raftPort := raftAddr[strings.LastIndex(raftAddr, ":"):]
	cert, key, ca := filepath.Join(dir, "c1.pem"), filepath.Join(dir, "c1-key.pem"), filepath.Join(dir, "gpulayer-ca.pem")
	stderr := startCoordinator(t, "--data-dir", data, "--http-addr", httpAddr, "--raft-addr", "0.0.0.0"+raftPort, "--raft-advertise", raftAddr,
		"--tls-cert", cert, "--tls-key", key, "--ca-file", ca, "--raft-tls-cert", cert, "--raft-tls-key", key, "--raft-ca", ca)
	pem, _ := os.ReadFile(ca)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	waitCoordinatorLeads(t, hc, "https://"+httpAddr, stderr)
	if strings.Contains(stderr.String(), "PLAINTEXT") {
		t.Fatalf("warned about plaintext Raft with TLS on:\n%s", stderr.String())
	}
}

// Plaintext Raft on a non-loopback address is refused from the CLI, and
// allowed, with a loud warning, with --allow-insecure-raft.
func TestCoordinatorRefusesPlaintextRaft(t *testing.T) {
	data := t.TempDir()
	mustRun(t, "coordinator", "init", "--data-dir", data)
	httpAddr, raftAddr := coordinatortest.FreeAddr(t), coordinatortest.FreeAddr(t)
	raftPort := raftAddr[strings.LastIndex(raftAddr, ":"):]
	args := []string{"coordinator", "run", "--data-dir", data, "--http-addr", httpAddr, "--raft-addr", "0.0.0.0" + raftPort, "--raft-advertise", raftAddr}
	if r := run(t, nil, args...); r.code == 0 || !strings.Contains(r.stderr, "--allow-insecure-raft") {
		t.Fatalf("plaintext Raft on 0.0.0.0: exit %d, %q", r.code, r.stderr)
	}
	stderr := startCoordinator(t, append(args[2:], "--allow-insecure-raft")...)
	waitCoordinatorLeads(t, &http.Client{Timeout: 2 * time.Second}, "http://"+httpAddr, stderr)
	if !strings.Contains(stderr.String(), "authenticated by the cluster key alone") {
		t.Fatalf("no warning about Raft without operator certificates:\n%s", stderr.String())
	}
}
