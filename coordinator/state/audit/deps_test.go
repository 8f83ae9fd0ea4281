package audit_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/internal/archtest"
)

// The audit room knows no other room but the state's value types.
func TestAuditImportsNoOtherRoom(t *testing.T) {
	archtest.Isolated(t, ".", 1, "audit is the audit log; the state records into it",
		"github.com/gpulayer/gpulayer/coordinator/command")
}
