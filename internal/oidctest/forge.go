package oidctest

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Claims builds a standard claim set from this provider for subject,
// issued to aud, expiring in ttl (negative: already expired).
func (p *Provider) Claims(subject, aud string, ttl time.Duration, groups ...string) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": p.Issuer, "sub": subject, "aud": aud,
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(ttl).Unix(),
	}
	if groups != nil {
		c["groups"] = groups
	}
	return c
}

// Forge signs claims with the provider's current signing key, under its
// key id: a token the provider itself could have issued.
func (p *Provider) Forge(t testing.TB, claims map[string]any) string {
	t.Helper()
	p.st.mu.Lock()
	k := p.st.signing
	p.st.mu.Unlock()
	return sign(t, jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.id}}, claims)
}

// ForgeUnknownKey signs claims with a fresh key of alg that the provider
// never published, under a key id it never used.
func (p *Provider) ForgeUnknownKey(t testing.TB, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	k, err := newKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.id}}, claims)
}

// ForgeHS256WithPublicKey signs claims with HMAC-SHA256 keyed by the
// provider's published public key (PEM), under its key id: the classic
// algorithm-confusion attack.
func (p *Provider) ForgeHS256WithPublicKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	p.st.mu.Lock()
	k := p.st.signing
	p.st.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: secret, KeyID: k.id}}, claims)
}

// ForgeNone is claims with "alg": "none" and an empty signature.
func (p *Provider) ForgeNone(t testing.TB, claims map[string]any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeToString(head) + "." + enc.EncodeToString(body) + "."
}

func sign(t testing.TB, sk jose.SigningKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
