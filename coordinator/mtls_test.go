package coordinator_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// testCA is a certificate authority for tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(dir, name+"-ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, file: file}
}

// issue signs a leaf certificate for the given uses and writes it and its
// key to dir.
func (ca *testCA) issue(t *testing.T, dir, name string, usage ...x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestMutualTLS: with --client-ca the coordinator serves only clients that
// show a certificate its CA signed; the bearer token is still required.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "gpulayer")
	rogue := newTestCA(t, dir, "rogue")
	srvCert, srvKey := ca.issue(t, dir, "coordinator", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	cliCert, cliKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	badCert, badKey := rogue.issue(t, dir, "intruder", x509.ExtKeyUsageClientAuth)
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.TLSCert, c.TLSKey, c.ClientCAFile = srvCert, srvKey, ca.file
	}})
	ctx := t.Context()
	newClient := func(cert, key, token string) *client.Client {
		c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: token, CAFile: ca.file, ClientCert: cert, ClientKey: key, MaxRetryWait: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := newClient(cliCert, cliKey, h.AdminToken).Jobs(ctx, 1); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	if _, err := newClient("", "", h.AdminToken).Jobs(ctx, 1); err == nil {
		t.Fatal("served a client without a certificate")
	}
	if _, err := newClient(badCert, badKey, h.AdminToken).Jobs(ctx, 1); err == nil {
		t.Fatal("served a client whose certificate another CA signed")
	}
	if _, err := newClient(cliCert, cliKey, "").Jobs(ctx, 1); err == nil {
		t.Fatal("a certificate replaced the bearer token")
	}
	if _, err := coordinator.New(coordinator.Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0", ClientCAFile: ca.file}); err == nil {
		t.Fatal("--client-ca without --tls-cert was accepted")
	}
}

// Coordinators that require client certificates show their own when they
// forward to each other, so a follower still answers.
func TestMutualTLSBetweenCoordinators(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "gpulayer")
	srvCert, srvKey := ca.issue(t, dir, "coordinator", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	cliCert, cliKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		cfg.TLSCert, cfg.TLSKey, cfg.ClientCAFile = srvCert, srvKey, ca.file
		cfg.HTTPAdvertise = "https://" + cfg.HTTPAddr
		for i, u := range cfg.Join {
			cfg.Join[i] = strings.Replace(u, "http://", "https://", 1)
		}
	}})
	leader := c.WaitLeader(15 * time.Second)
	for _, n := range c.Nodes {
		if n == leader {
			continue
		}
		cl, err := client.New(client.Config{Addrs: []string{"https://" + n.HTTPAddr}, Token: c.AdminToken, CAFile: ca.file, ClientCert: cliCert, ClientKey: cliKey})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.SubmitJob(t.Context(), execJob()); err != nil {
			t.Fatalf("a write through follower %s: %v", n.ID, err)
		}
	}
}
