package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The state's words are the protocol's, so coordinator/view passes them
// through unchanged.
func TestVocabularyIsTheProtocols(t *testing.T) {
	cases := []struct{ state, api string }{
		{taskPending, api.TaskPending},
		{taskAssigned, api.TaskAssigned},
		{taskRunning, api.TaskRunning},
		{taskSucceeded, api.TaskSucceeded},
		{taskFailed, api.TaskFailed},
		{taskCancelled, api.TaskCancelled},
		{attemptLost, api.AttemptLost},
		{attemptPreempted, api.AttemptPreempted},
		{workerDraining, api.WorkerDraining},
		{workerStopping, api.WorkerStopping},
		{drainedBySelf, api.DrainedBySelf},
		{gpuops.HealthHealthy, api.HealthHealthy},
		{gpuops.HealthRecovering, api.HealthRecovering},
		{gpuops.HealthUnhealthy, api.HealthUnhealthy},
		{workerPending, api.WorkerPending},
		{workerReady, api.WorkerReady},
		{workerOffline, api.WorkerOffline},
		{workerRevoked, api.WorkerRevoked},
		{memberWorker, api.MemberWorker},
		{memberGroup, api.MemberGroup},
		{targetWorker, api.TargetWorker},
		{targetGroup, api.TargetGroup},
		{originJoin, api.OriginJoin},
		{originProvider, api.OriginProvider},
		{originEnrollment, api.OriginEnrollment},
		{enroll.Pending, api.EnrollmentPending},
		{enroll.Enrolled, api.EnrollmentEnrolled},
		{enroll.Revoked, api.EnrollmentRevoked},
		{codeConflict, string(api.CodeConflict)},
		{labelNVLinkDomain, api.LabelNVLinkDomain},
		{labelSwitch, api.LabelSwitch},
		{labelRack, api.LabelRack},
		{codeEnrollmentRefused, string(api.CodeEnrollmentRefused)},
		{timeFormat, api.TimeFormat},
	}
	for _, c := range cases {
		if c.state != c.api {
			t.Errorf("state says %q where the protocol says %q", c.state, c.api)
		}
	}
}
