package runner

// End is how an attempt ended on this agent, in one word from a fixed set
// (for metrics and logs; the reason says more).
type End string

// Ends.
const (
	// EndSucceeded: the task ran and exited 0.
	EndSucceeded End = "succeeded"
	// EndFailed: the task ran and exited non-zero.
	EndFailed End = "failed"
	// EndTimedOut: the task was stopped at its timeout.
	EndTimedOut End = "timed_out"
	// EndCancelled: the task was stopped on request (the coordinator's
	// cancel or stop, a lost lease, revocation), before or after its
	// process started.
	EndCancelled End = "cancelled"
	// EndGPUFault: a GPU the attempt held failed; it was stopped and
	// reported failed naming the GPU (FailRequest.GPUFault): the
	// coordinator ends it lost, uses up no attempt and places the task
	// again on sound GPUs at once.
	EndGPUFault End = "gpu_fault"
	// EndOverShare: the attempt's processes used more of a shared GPU's
	// memory than its share; the agent's watchdog stopped it and
	// reported it failed (docs/gpus.md, "Fractional sharing").
	EndOverShare End = "over_gpu_share"
	// EndForeignGPU: a shared attempt's processes ran on a GPU it was not
	// given; the agent's watchdog stopped it and reported it failed.
	EndForeignGPU End = "foreign_gpu"
	// EndShutdown: the agent shut down and handed the attempt back.
	EndShutdown End = "shutdown"
	// EndStale: the coordinator no longer counted the attempt current
	// (superseded, lease lost, start refused); nothing more was reported.
	EndStale End = "stale"
	// EndError: the agent or the executor could not run the task (the
	// executor unavailable, refusing the start or crashing under it; no
	// task user or directory).
	EndError End = "error"
	// EndDuplicate: the attempt was handed to Run while it ran already;
	// the second call did nothing.
	EndDuplicate End = "duplicate"
)

// Ends lists every End, in the order above.
func Ends() []End {
	return []End{EndSucceeded, EndFailed, EndTimedOut, EndCancelled, EndGPUFault, EndOverShare, EndForeignGPU, EndShutdown, EndStale, EndError}
}

// staleOutcome is the outcome of an attempt found stale, which reports
// nothing more.
func staleOutcome(exitCode int) Outcome {
	return Outcome{ExitCode: exitCode, Failed: true, Reason: "stale attempt", End: EndStale}
}

// exitEnd is the end of a task that ran to an exit code: stopped at its
// timeout (timedOut), on request (stopped), or by itself.
func exitEnd(exitCode int, timedOut, stopped bool) End {
	switch {
	case timedOut:
		return EndTimedOut
	case stopped:
		return EndCancelled
	case exitCode == 0:
		return EndSucceeded
	default:
		return EndFailed
	}
}

// stopCause is why the agent stopped an attempt itself: its end and the
// reason it reports.
type stopCause struct {
	end    End
	reason string
	gpu    string // EndGPUFault: the GPU that failed (a UUID the attempt holds)
}
