package executor

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// toStatus turns an executor error into a gRPC status error, keeping the
// sentinel as a status code so the host can restore it.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isSentinel(err) {
		return err
	}
	code := codes.Unknown
	switch {
	case errors.Is(err, ErrUnknownTask):
		code = codes.NotFound
	case errors.Is(err, ErrDuplicateTask):
		code = codes.AlreadyExists
	case errors.Is(err, ErrInvalidConfig):
		code = codes.InvalidArgument
	case errors.Is(err, ErrPermanent):
		code = codes.FailedPrecondition
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}

func isSentinel(err error) bool {
	return errors.Is(err, ErrUnknownTask) || errors.Is(err, ErrDuplicateTask) || errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrPermanent)
}

// fromStatus turns a gRPC error from the plugin back into an error that
// matches the executor's sentinels (and the context errors) with errors.Is.
// A plain error the plugin returned (code Unknown) reads as the plugin's
// own message, without gRPC's "rpc error: code = … desc =" wrapping, since
// it ends up in a task's reason. Other errors (transport failures, a
// plugin that went away) keep their gRPC status as they are. Every result
// still yields its status to status.Code and status.FromError.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var sentinel error
	switch st.Code() {
	case codes.NotFound:
		sentinel = ErrUnknownTask
	case codes.AlreadyExists:
		sentinel = ErrDuplicateTask
	case codes.InvalidArgument:
		sentinel = ErrInvalidConfig
	case codes.FailedPrecondition:
		sentinel = ErrPermanent
	case codes.Canceled:
		sentinel = context.Canceled
	case codes.DeadlineExceeded:
		sentinel = context.DeadlineExceeded
	case codes.Unknown:
		return &remoteError{msg: st.Message(), status: err}
	default:
		return err
	}
	return &remoteError{msg: st.Message(), sentinel: sentinel, status: err}
}

// remoteError is an error returned by the plugin: it reads as the plugin's
// message and matches the sentinel it was mapped from.
type remoteError struct {
	msg      string
	sentinel error
	status   error
}

func (e *remoteError) Error() string { return e.msg }

// Unwrap exposes the sentinel (if any) and the original gRPC status error.
func (e *remoteError) Unwrap() []error {
	if e.sentinel == nil {
		return []error{e.status}
	}
	return []error{e.sentinel, e.status}
}
