package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ErrMalformedToken is returned for a string that is not a GpuLayer token.
var ErrMalformedToken = errors.New("auth: malformed token")

const (
	idBytes     = 8
	secretBytes = 32
)

// Token is a parsed credential. Secret must never be logged.
type Token struct {
	Prefix string
	ID     string
	Secret string
}

// String renders the full bearer string.
func (t Token) String() string { return t.Prefix + "_" + t.ID + "_" + t.Secret }

// Hash is the hex SHA-256 of the secret: the only form that is stored.
func (t Token) Hash() string { return HashSecret(t.Secret) }

// Minted is a freshly created credential: the bearer string to show once,
// and what is stored.
type Minted struct {
	Token Token
	Hash  string
}

// Mint creates a new random token with the given prefix.
func Mint(prefix string) (Minted, error) {
	if !knownPrefix(prefix) {
		return Minted{}, fmt.Errorf("mint: unknown prefix %q", prefix)
	}
	id, err := randomHex(idBytes)
	if err != nil {
		return Minted{}, fmt.Errorf("mint: %w", err)
	}
	secret, err := randomHex(secretBytes)
	if err != nil {
		return Minted{}, fmt.Errorf("mint: %w", err)
	}
	t := Token{Prefix: prefix, ID: id, Secret: secret}
	return Minted{Token: t, Hash: t.Hash()}, nil
}

// NewID returns a random identifier of n bytes, hex encoded.
func NewID(n int) string {
	s, err := randomHex(n)
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return s
}

// Parse splits a bearer string. It checks shape only, not validity.
func Parse(s string) (Token, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 3 {
		return Token{}, ErrMalformedToken
	}
	t := Token{Prefix: parts[0], ID: parts[1], Secret: parts[2]}
	if !knownPrefix(t.Prefix) || !isHex(t.ID, idBytes*2) || !isHex(t.Secret, secretBytes*2) {
		return Token{}, ErrMalformedToken
	}
	return t, nil
}

// HashSecret returns the hex SHA-256 of secret.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Verify reports whether secret hashes to storedHash, in constant time.
func Verify(secret, storedHash string) bool {
	got := HashSecret(secret)
	return subtle.ConstantTimeCompare([]byte(got), []byte(storedHash)) == 1
}

func knownPrefix(p string) bool {
	switch p {
	case api.PrefixClient, api.PrefixJoin, api.PrefixInstance, api.PrefixWorker:
		return true
	}
	return false
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
