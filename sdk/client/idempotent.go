package client

import (
	"context"
	"crypto/rand"
)

// idempotentKey marks a call whose request carries its own request id, so
// sending it twice has the effect of sending it once.
type idempotentKey struct{}

// withIdempotent marks ctx's call as safe to resend after any transport
// error.
func withIdempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func isIdempotent(ctx context.Context) bool {
	v, _ := ctx.Value(idempotentKey{}).(bool)
	return v
}

// newRequestID returns a random request id (128 bits and more).
func newRequestID() string { return rand.Text() }
