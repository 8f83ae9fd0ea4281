package coordinator_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func TestPlaintextRefusedOnRemoteAddress(t *testing.T) {
	dir := t.TempDir()
	if _, err := coordinator.Init(dir, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:7070"} {
		_, err := coordinator.New(coordinator.Config{DataDir: dir, HTTPAddr: addr, RaftAddr: "127.0.0.1:0"})
		if !errors.Is(err, coordinator.ErrInsecureRemote) {
			t.Errorf("plaintext on %s: %v, want ErrInsecureRemote", addr, err)
		}
	}
}

func TestInitStoresOnlyHashes(t *testing.T) {
	dir := t.TempDir()
	toks, err := coordinator.Init(dir, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, coordinator.BootstrapFile)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("bootstrap file: %v, mode %v", err, info.Mode())
	}
	b, _ := os.ReadFile(path)
	for _, tok := range []string{toks.AdminToken, toks.JoinToken} {
		if len(tok) < 80 || bytes.Contains(b, []byte(tok[len(tok)-64:])) {
			t.Fatalf("bootstrap file holds a secret or token is short: %q", tok)
		}
	}
	if _, err := coordinator.Init(dir, false, time.Now()); !errors.Is(err, coordinator.ErrAlreadyInitialized) {
		t.Fatalf("second init: %v", err)
	}
	rot, err := coordinator.Init(dir, true, time.Now())
	if err != nil || rot.AdminToken == toks.AdminToken {
		t.Fatalf("rotate: %v", err)
	}
}

func TestRotationRevokesOldTokens(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	old := h.Client(t, h.AdminToken)
	if _, err := old.Jobs(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	rot, err := coordinator.Init(h.DataDir, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The running coordinator imports the new generation when it next
	// takes office; a restart on the same data dir does that.
	h2 := coordinatortest.Restart(t, h)
	if _, err := h2.Client(t, h.AdminToken).Jobs(t.Context(), 1); err == nil {
		t.Fatal("rotated-away admin token still works")
	}
	if _, err := h2.Client(t, rot.AdminToken).Jobs(t.Context(), 1); err != nil {
		t.Fatalf("new admin token: %v", err)
	}
}

func TestServesTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, caFile := selfSigned(t, dir)
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.TLSCert, c.TLSKey = certFile, keyFile
	}})
	c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: h.AdminToken, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Jobs(t.Context(), 1); err != nil {
		t.Fatalf("HTTPS with the CA: %v", err)
	}
	// TLS 1.1 is refused.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}} //nolint:gosec // probing the floor
	if _, err := (&http.Client{Transport: tr}).Get(h.URL + "/v1/status/health"); err == nil {
		t.Fatal("a TLS 1.1 client was served")
	}
	// Without the CA the certificate is not trusted.
	c2, _ := client.New(client.Config{Addrs: []string{h.URL}, Token: h.AdminToken, MaxRetryWait: time.Millisecond})
	if _, err := c2.Jobs(t.Context(), 1); err == nil {
		t.Fatal("untrusted certificate accepted")
	}
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile, caFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gpulayer-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile, certFile
}
