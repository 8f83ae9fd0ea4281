package certs

import (
	"crypto"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// A cluster key is a secret every coordinator of a cluster holds when the
// operator gave no Raft certificates (a dev or one-node set-up, or
// coordinators sharing one host). From it each coordinator derives the
// same certificate authority, byte for byte, and issues itself a peer
// certificate with the cluster's server name. Raft and every
// coordinator-to-coordinator HTTP call then run over mutual TLS exactly
// as with an operator's CA: whoever lacks the key can neither join Raft
// nor pass for a coordinator.

// MinClusterKeyBytes is the shortest cluster key accepted.
const MinClusterKeyBytes = 32

// ErrClusterKey refuses a key that is too short to be a secret.
var ErrClusterKey = fmt.Errorf("cluster key must be at least %d bytes", MinClusterKeyBytes)

// derivedEpoch fixes the derived CA's validity, so that every coordinator
// builds the same certificate.
var derivedEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// DerivedCA builds the certificate authority a cluster key stands for.
// The same key and cluster always give the same certificate.
func DerivedCA(key []byte, cluster string) (*CA, error) {
	if len(key) < MinClusterKeyBytes {
		return nil, ErrClusterKey
	}
	if err := ValidateCluster(cluster); err != nil {
		return nil, err
	}
	seed, err := hkdf.Key(sha256.New, key, []byte("gpulayer cluster CA"), "v1 "+cluster, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	ski := sha256.Sum256(pub)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "GpuLayer cluster-key CA " + cluster, Organization: []string{"GpuLayer"}},
		NotBefore:             derivedEpoch,
		NotAfter:              derivedEpoch.AddDate(100, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		SubjectKeyId:          ski[:20],
	}
	// Ed25519 signatures are deterministic: no randomness is drawn.
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, fmt.Errorf("certs: derive the cluster CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: priv}, nil
}

// DerivedPeer issues a fresh peer certificate under the CA a cluster key
// stands for: the cluster's server name, serverAuth and clientAuth, valid
// for a year from now. It returns the certificate and the pool that
// verifies every peer of the cluster.
func DerivedPeer(key []byte, cluster string, now time.Time) (tls.Certificate, *x509.CertPool, error) {
	ca, err := DerivedCA(key, cluster)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now = nowOr(now)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: ServerName(cluster), Organization: []string{"GpuLayer"}},
		DNSNames:     []string{ServerName(cluster)},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("certs: issue the peer certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: crypto.Signer(priv), Leaf: leaf}, pool, nil
}

// NewClusterKey returns a fresh random cluster key.
func NewClusterKey() ([]byte, error) {
	k := make([]byte, MinClusterKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, errors.Join(errors.New("certs: read randomness"), err)
	}
	return k, nil
}
