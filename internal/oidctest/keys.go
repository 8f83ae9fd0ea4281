package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// key is one signing key of the provider.
type key struct {
	id   string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *key) Key() any                                    { return k.priv }
func (k *key) ID() string                                  { return k.id }

// publicKey is a key as the key set publishes it.
type publicKey struct{ k *key }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return p.k.alg }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return p.k.priv.Public() }

// newKey makes a key for alg (RS256 or ES256) with a random id.
func newKey(alg jose.SignatureAlgorithm) (*key, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	k := &key{id: hex.EncodeToString(b[:]), alg: alg}
	var err error
	switch alg {
	case jose.RS256:
		k.priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		k.priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, fmt.Errorf("oidctest: algorithm %s not offered", alg)
	}
	return k, err
}
