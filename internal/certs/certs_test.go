package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func parse(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCA(t *testing.T, cluster string) (*CA, PEM) {
	t.Helper()
	p, err := NewCA(CAOptions{Cluster: cluster, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	return ca, p
}

func TestCertificatesCarryTheClusterIdentity(t *testing.T) {
	ca, caPEM := newCA(t, "prod")
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if !ca.Cert.IsCA || ca.Cert.MaxPathLen != 0 || !ca.Cert.MaxPathLenZero {
		t.Fatalf("CA constraints: IsCA=%v MaxPathLen=%d", ca.Cert.IsCA, ca.Cert.MaxPathLen)
	}
	if time.Until(parse(t, caPEM.Cert).NotAfter) < 29*24*time.Hour {
		t.Fatal("CA validity is not --days")
	}
	cases := []struct {
		name     string
		opts     CertOptions
		dns      []string
		ips      []string
		usages   []x509.ExtKeyUsage
		verifies map[x509.ExtKeyUsage]bool
	}{
		{
			name:   "server",
			opts:   CertOptions{Kind: Server, Cluster: "prod", Days: 10, DNSNames: []string{"c1.example"}, IPs: []net.IP{net.ParseIP("10.0.0.11")}},
			dns:    []string{"server.prod.gpulayer", "localhost", "c1.example"},
			ips:    []string{"127.0.0.1", "10.0.0.11"},
			usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			verifies: map[x509.ExtKeyUsage]bool{
				x509.ExtKeyUsageServerAuth: true, x509.ExtKeyUsageClientAuth: true,
			},
		},
		{
			name:   "client",
			opts:   CertOptions{Kind: Client, Cluster: "prod", Days: 10},
			dns:    []string{"client.prod.gpulayer"},
			usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			verifies: map[x509.ExtKeyUsage]bool{
				x509.ExtKeyUsageServerAuth: false, x509.ExtKeyUsageClientAuth: true,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewCert(ca, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := parse(t, p.Cert)
			if !slices.Equal(c.DNSNames, tc.dns) {
				t.Errorf("DNS names %v, want %v", c.DNSNames, tc.dns)
			}
			var ips []string
			for _, ip := range c.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.ips) {
				t.Errorf("IPs %v, want %v", ips, tc.ips)
			}
			if !slices.Equal(c.ExtKeyUsage, tc.usages) {
				t.Errorf("usages %v, want %v", c.ExtKeyUsage, tc.usages)
			}
			if c.IsCA {
				t.Error("a leaf is a CA")
			}
			for use, want := range tc.verifies {
				_, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{use}})
				if (err == nil) != want {
					t.Errorf("verify for usage %v: %v, want ok=%v", use, err, want)
				}
			}
			if c.NotAfter.After(ca.Cert.NotAfter) || time.Until(c.NotAfter) < 9*24*time.Hour {
				t.Errorf("validity until %v", c.NotAfter)
			}
		})
	}
}

func TestBadRequestsAreRefused(t *testing.T) {
	ca, _ := newCA(t, "global")
	other, otherPEM := newCA(t, "global")
	cases := map[string]func() error{
		"bad cluster name": func() error {
			_, err := NewCert(ca, CertOptions{Kind: Server, Cluster: "Prod.1", Days: 1})
			return err
		},
		"zero days": func() error {
			_, err := NewCA(CAOptions{Cluster: "global"})
			return err
		},
		"no kind": func() error {
			_, err := NewCert(ca, CertOptions{Cluster: "global", Days: 1})
			return err
		},
		"client with extra names": func() error {
			_, err := NewCert(ca, CertOptions{Kind: Client, Cluster: "global", Days: 1, DNSNames: []string{"x"}})
			return err
		},
		"key of another CA": func() error {
			_, mine := newCA(t, "global")
			_, err := ParseCA(mine.Cert, otherPEM.Key)
			return err
		},
		"leaf as CA": func() error {
			p, err := NewCert(other, CertOptions{Kind: Server, Cluster: "global", Days: 1})
			if err != nil {
				return nil
			}
			_, err = ParseCA(p.Cert, p.Key)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestWriteNewRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "c-key.pem")
	p := PEM{Cert: []byte("cert"), Key: []byte("key")}
	if err := WriteNew(p, cert, key); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]os.FileMode{cert: 0o644, key: 0o600} {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want %v", f, err, st.Mode().Perm(), want)
		}
	}
	// Only the key exists: nothing is written, the key is untouched.
	os.Remove(cert)
	err := WriteNew(PEM{Cert: []byte("new"), Key: []byte("new")}, cert, key)
	if !errors.Is(err, ErrExists) {
		t.Fatalf("overwrite: %v", err)
	}
	if b, _ := os.ReadFile(key); string(b) != "key" {
		t.Fatalf("key overwritten: %q", b)
	}
	if _, err := os.Stat(cert); err == nil {
		t.Fatal("a refused write left a certificate behind")
	}
}
