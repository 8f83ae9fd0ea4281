package executor

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestErrorsCrossTheWire(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error
		code codes.Code
	}{
		{"unknown", fmt.Errorf("exec: wait t1: %w", ErrUnknownTask), ErrUnknownTask, codes.NotFound},
		{"duplicate", fmt.Errorf("exec: start t1: %w", ErrDuplicateTask), ErrDuplicateTask, codes.AlreadyExists},
		{"invalid", fmt.Errorf("exec: %w: unknown field \"x\"", ErrInvalidConfig), ErrInvalidConfig, codes.InvalidArgument},
		{"permanent", Permanent(errors.New("exec: \"nvidia-smi\": executable file not found in $PATH")), ErrPermanent, codes.FailedPrecondition},
		{"canceled", context.Canceled, context.Canceled, codes.Canceled},
		{"deadline", fmt.Errorf("wait: %w", context.DeadlineExceeded), context.DeadlineExceeded, codes.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := toStatus(tc.err)
			if got := status.Code(wire); got != tc.code {
				t.Fatalf("code %v, want %v", got, tc.code)
			}
			back := fromStatus(wire)
			if !errors.Is(back, tc.want) {
				t.Errorf("errors.Is(%v, %v) = false", back, tc.want)
			}
			if back.Error() != tc.err.Error() {
				t.Errorf("message %q, want the plugin's %q", back.Error(), tc.err.Error())
			}
			if status.Code(back) != tc.code {
				t.Errorf("status.Code(mapped) = %v, want %v", status.Code(back), tc.code)
			}
		})
	}
}

func TestOtherErrorsKeepStatus(t *testing.T) {
	plain := toStatus(errors.New("disk full"))
	if status.Code(plain) != codes.Unknown {
		t.Fatalf("code %v, want Unknown", status.Code(plain))
	}
	back := fromStatus(plain)
	if errors.Is(back, ErrUnknownTask) || errors.Is(back, ErrInvalidConfig) || errors.Is(back, ErrDuplicateTask) {
		t.Errorf("plain error matched a sentinel: %v", back)
	}
	if back.Error() != "disk full" || status.Code(back) != codes.Unknown {
		t.Errorf("plain error came back as %q (code %v), want the plugin's own message", back.Error(), status.Code(back))
	}
	unavailable := status.Error(codes.Unavailable, "connection refused")
	if got := fromStatus(unavailable); status.Code(got) != codes.Unavailable {
		t.Errorf("transport error lost its status: %v", got)
	}
	if toStatus(nil) != nil || fromStatus(nil) != nil {
		t.Error("nil error mapped to non-nil")
	}
}

// A permanent failure is one that no retry can fix: an invalid config, or
// an error the plugin marked with Permanent; others are not.
func TestIsPermanent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{Permanent(errors.New("no such command")), true},
		{fmt.Errorf("start: %w", ErrInvalidConfig), true},
		{fromStatus(toStatus(Permanent(errors.New("gone")))), true},
		{errors.New("disk full"), false},
		{Permanent(nil), false},
		{nil, false},
	} {
		if got := IsPermanent(tc.err); got != tc.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
