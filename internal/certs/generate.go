package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Kind is what a leaf certificate is for.
type Kind int

const (
	// Server certificates identify a coordinator; they serve and dial
	// (serverAuth and clientAuth).
	Server Kind = iota + 1
	// Client certificates identify a client (clientAuth only).
	Client
)

// PEM is a certificate and its private key, PEM encoded.
type PEM struct {
	Cert []byte
	Key  []byte
}

// CA is a loaded certificate authority that can sign.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CAOptions describe a new CA.
type CAOptions struct {
	Cluster string
	Days    int
	Now     time.Time
}

// CertOptions describe a new leaf certificate.
type CertOptions struct {
	Kind    Kind
	Cluster string
	Days    int
	// DNSNames and IPs are added to the certificate's names (servers only:
	// the addresses clients and agents use over HTTPS).
	DNSNames []string
	IPs      []net.IP
	Now      time.Time
}

// clockSkew backdates NotBefore so that a peer whose clock is slightly
// behind accepts a certificate made a moment ago.
const clockSkew = 5 * time.Minute

// ErrDays refuses a validity that is not positive.
var ErrDays = errors.New("validity must be at least one day")

// NewCA makes a self-signed CA for cluster.
func NewCA(o CAOptions) (PEM, error) {
	if err := ValidateCluster(o.Cluster); err != nil {
		return PEM{}, err
	}
	if o.Days < 1 {
		return PEM{}, ErrDays
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEM{}, err
	}
	serial, err := newSerial()
	if err != nil {
		return PEM{}, err
	}
	now := nowOr(o.Now)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "GpuLayer CA " + o.Cluster, Organization: []string{"GpuLayer"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(0, 0, o.Days),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return PEM{}, fmt.Errorf("certs: sign CA: %w", err)
	}
	return encode(der, key)
}

// NewCert makes a leaf certificate signed by ca.
func NewCert(ca *CA, o CertOptions) (PEM, error) {
	if err := ValidateCluster(o.Cluster); err != nil {
		return PEM{}, err
	}
	if o.Days < 1 {
		return PEM{}, ErrDays
	}
	tmpl := &x509.Certificate{KeyUsage: x509.KeyUsageDigitalSignature}
	switch o.Kind {
	case Server:
		name := ServerName(o.Cluster)
		tmpl.Subject = pkix.Name{CommonName: name}
		tmpl.DNSNames = append([]string{name, "localhost"}, o.DNSNames...)
		tmpl.IPAddresses = append([]net.IP{net.IPv4(127, 0, 0, 1)}, o.IPs...)
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	case Client:
		if len(o.DNSNames) > 0 || len(o.IPs) > 0 {
			return PEM{}, errors.New("certs: extra names are for server certificates")
		}
		name := ClientName(o.Cluster)
		tmpl.Subject = pkix.Name{CommonName: name}
		tmpl.DNSNames = []string{name}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		return PEM{}, errors.New("certs: say whether the certificate is for a server or a client")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEM{}, err
	}
	if tmpl.SerialNumber, err = newSerial(); err != nil {
		return PEM{}, err
	}
	now := nowOr(o.Now)
	tmpl.NotBefore = now.Add(-clockSkew)
	tmpl.NotAfter = now.AddDate(0, 0, o.Days)
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return PEM{}, fmt.Errorf("certs: sign certificate: %w", err)
	}
	return encode(der, key)
}

// ParseCA reads a CA certificate and its key.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, errors.New("certs: CA file holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("certs: the CA certificate is not a CA")
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, errors.New("certs: CA key file holds no PEM key")
	}
	parsed, err := parseKey(kb)
	if err != nil {
		// Never echo key material; the parser's message names no bytes.
		return nil, fmt.Errorf("certs: CA key: %w", err)
	}
	signer, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, errors.New("certs: CA key cannot sign")
	}
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(signer.Public()) {
		return nil, errors.New("certs: the CA key does not belong to the CA certificate")
	}
	return &CA{Cert: cert, Key: signer}, nil
}

// parseKey reads a PKCS #8 key, or a SEC 1 EC key (openssl's default).
func parseKey(b *pem.Block) (any, error) {
	if b.Type == "EC PRIVATE KEY" {
		return x509.ParseECPrivateKey(b.Bytes)
	}
	return x509.ParsePKCS8PrivateKey(b.Bytes)
}

func encode(der []byte, key *ecdsa.PrivateKey) (PEM, error) {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return PEM{}, err
	}
	return PEM{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}),
	}, nil
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func nowOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
