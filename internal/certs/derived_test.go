package certs

import (
	"bytes"
	"crypto/x509"
	"errors"
	"testing"
	"time"
)

func TestDerivedCAIsTheSameForTheSameKey(t *testing.T) {
	key := bytes.Repeat([]byte{7}, MinClusterKeyBytes)
	a, err := DerivedCA(key, "global")
	if err != nil {
		t.Fatal(err)
	}
	b, err := DerivedCA(bytes.Clone(key), "global")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Cert.Raw, b.Cert.Raw) {
		t.Fatal("two derivations of one key differ: peers would not trust each other")
	}
	other, err := DerivedCA(key, "other")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Cert.Raw, other.Cert.Raw) {
		t.Fatal("another cluster name derived the same CA")
	}
}

func TestDerivedPeerVerifiesOnlyUnderItsKey(t *testing.T) {
	key := bytes.Repeat([]byte{1}, MinClusterKeyBytes)
	wrong := bytes.Repeat([]byte{2}, MinClusterKeyBytes)
	now := time.Now()
	cert, pool, err := DerivedPeer(key, "global", now)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPool, err := DerivedPeer(wrong, "global", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		pool  *x509.CertPool
		dns   string
		usage x509.ExtKeyUsage
		ok    bool
	}{
		{"same key, serving", pool, ServerName("global"), x509.ExtKeyUsageServerAuth, true},
		{"same key, dialling", pool, ServerName("global"), x509.ExtKeyUsageClientAuth, true},
		{"another key", otherPool, ServerName("global"), x509.ExtKeyUsageServerAuth, false},
		{"another cluster's name", pool, ServerName("other"), x509.ExtKeyUsageServerAuth, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: tc.pool, DNSName: tc.dns, KeyUsages: []x509.ExtKeyUsage{tc.usage}, CurrentTime: now})
			if (err == nil) != tc.ok {
				t.Fatalf("verify: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestShortClusterKeyRefused(t *testing.T) {
	if _, err := DerivedCA(make([]byte, MinClusterKeyBytes-1), "global"); !errors.Is(err, ErrClusterKey) {
		t.Fatalf("err = %v, want ErrClusterKey", err)
	}
	k, err := NewClusterKey()
	if err != nil || len(k) != MinClusterKeyBytes {
		t.Fatalf("NewClusterKey: %d bytes, %v", len(k), err)
	}
}
