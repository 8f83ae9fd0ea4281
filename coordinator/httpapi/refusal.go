package httpapi

import (
	"errors"

	"github.com/gpulayer/gpulayer/coordinator/auth"
)

// refusalKind says why a credential was refused (auth.Reason), as the
// label of gpulayer_auth_refused_total. The set is fixed (auth.Reasons):
// a label never holds anything the caller sent.
type refusalKind = auth.Reason

// refusalKinds lists every kind, so each series exists from the start.
var refusalKinds = auth.Reasons

// refusal is an authentication or authorisation error with its kind. It
// unwraps to the error it carries, so codeFor and the answer are those of
// that error.
type refusal struct {
	kind refusalKind
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refuse(kind refusalKind, err error) error { return &refusal{kind: kind, err: err} }

// kindOf is the refusal kind err carries (other if none).
func kindOf(err error) refusalKind {
	var r *refusal
	if errors.As(err, &r) {
		return r.kind
	}
	return auth.ReasonOther
}
