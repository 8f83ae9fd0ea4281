package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The task routes only authenticate, validate shape, and forward the
// authenticated worker id: whether the worker holds the task under that
// attempt is decided inside the state machine, atomically with the write.
// Log posts alone are also checked against the local replica first, and a
// refusal that is certain is answered without proposing (see
// state.Store.CheckLogChunk).

const maxLogChunk = api.MaxLogChunkBytes

func requireAttempt(id string) error {
	if id == "" {
		return invalidf("attempt_id is required")
	}
	if len(id) > api.MaxKeyBytes {
		return invalidf("attempt_id: %d bytes, at most %d", len(id), api.MaxKeyBytes)
	}
	return nil
}

// taskAnswer answers a task route with the task as the command left it.
// A finish replayed under its submission id has for outcome the record
// the first one left, so it renders the same answer byte for byte.
func taskAnswer(w http.ResponseWriter, t state.Task) {
	writeJSON(w, http.StatusOK, api.TaskResponse{Task: view.Task(t)})
}

func (s *Server) startTask(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.StartRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := requireAttempt(req.AttemptID); err != nil {
		return err
	}
	pf, err := preflightReport(req.Preflight, true) // preflightreport.go
	if err != nil {
		return err
	}
	t, err := state.Propose[state.Task](r.Context(), s.propose, command.StartTask{TaskID: r.PathValue("id"), WorkerID: p.WorkerID, AttemptID: req.AttemptID, Now: s.now(), Preflight: pf})
	if err != nil {
		return err
	}
	taskAnswer(w, t)
	return nil
}

func (s *Server) taskLogs(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.LogsRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := requireAttempt(req.AttemptID); err != nil {
		return err
	}
	switch {
	case req.Stream != api.StreamStdout && req.Stream != api.StreamStderr:
		return invalidf("stream must be %q or %q", api.StreamStdout, api.StreamStderr)
	case req.Seq <= 0:
		return invalidf("seq must be a positive integer")
	case len(req.Data) > maxLogChunk:
		return invalidf("data is over %d bytes; split it", maxLogChunk)
	}
	// A chunk the state machine would certainly refuse (unknown task,
	// held by another worker, ended attempt) or ignore (a seq already
	// seen, a log already full) is answered here, so that a flood of such
	// posts writes nothing to the Raft log.
	chk, err := s.store.CheckLogChunk(r.PathValue("id"), p.WorkerID, req.AttemptID, req.Seq)
	if err != nil {
		return err
	}
	if chk.Duplicate || chk.Room == 0 {
		writeJSON(w, http.StatusOK, api.LogsResponse{Accepted: false})
		return nil
	}
	req.Data = trimToRoom(req.Data, chk.Room)
	accepted, err := state.Propose[bool](r.Context(), s.propose, command.AppendLogs{TaskID: r.PathValue("id"), WorkerID: p.WorkerID, AttemptID: req.AttemptID, Stream: req.Stream, Seq: req.Seq, Data: req.Data, Now: s.now(), MaxOutputBytes: s.quotas.outputLimit()})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.LogsResponse{Accepted: accepted})
	return nil
}

func (s *Server) finishTask(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.FinishRequest
	raw, err := decodeRequest(r, &req, false)
	if err != nil {
		return err
	}
	if err := requireAttempt(req.AttemptID); err != nil {
		return err
	}
	if err := checkLen("submission_id", req.SubmissionID, api.MaxKeyBytes); err != nil {
		return err
	}
	if err := checkLen("output", req.Output, api.MaxOutputBytes); err != nil {
		return err
	}
	if err := checkLen("reason", req.Reason, api.MaxReasonBytes); err != nil {
		return err
	}
	if err := validateTaskArtifacts(req.Artifacts); err != nil {
		return err
	}
	if err := validateCheckpointRef(req.Checkpoint); err != nil { // preemption.go
		return err
	}
	canon, err := canonicalJSON(raw)
	if err != nil {
		return invalidf("invalid JSON body")
	}
	sum := sha256.Sum256(canon)
	t, err := state.Propose[state.Task](r.Context(), s.propose, command.FinishTask{
		TaskID:          r.PathValue("id"),
		WorkerID:        p.WorkerID,
		AttemptID:       req.AttemptID,
		SubmissionID:    req.SubmissionID,
		BodyHash:        hex.EncodeToString(sum[:]),
		ExitCode:        req.ExitCode,
		Output:          req.Output,
		Artifacts:       translate.TaskArtifactsFromAPI(req.Artifacts),
		RequireRecorded: true,
		Now:             s.now(),
		Reason:          req.Reason,
		Checkpoint:      translate.CheckpointFromAPI(req.Checkpoint),
		RequireProof:    true,
	})
	if err != nil {
		return err
	}
	s.leases.Ended(req.AttemptID)
	taskAnswer(w, t)
	return nil
}

func (s *Server) failTask(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.FailRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := requireAttempt(req.AttemptID); err != nil {
		return err
	}
	if err := checkLen("reason", req.Reason, api.MaxReasonBytes); err != nil {
		return err
	}
	if err := checkLen("gpu_fault", req.GPUFault, api.MaxDeviceUUIDBytes); err != nil {
		return err
	}
	if req.GPUFault != "" && req.Permanent {
		return invalidf("gpu_fault and permanent exclude each other: a GPU's fault says another GPU may succeed")
	}
	if err := validateCheckpointRef(req.Checkpoint); err != nil { // preemption.go
		return err
	}
	pf, err := preflightReport(req.Preflight, false) // preflightreport.go
	if err != nil {
		return err
	}
	t, err := state.Propose[state.Task](r.Context(), s.propose, command.FailTask{TaskID: r.PathValue("id"), WorkerID: p.WorkerID, AttemptID: req.AttemptID, Reason: req.Reason, Permanent: req.Permanent,
		GPUFault: req.GPUFault, Now: s.now(), Checkpoint: translate.CheckpointFromAPI(req.Checkpoint), RequireProof: true, Preflight: pf})
	if err != nil {
		return err
	}
	s.leases.Ended(req.AttemptID)
	taskAnswer(w, t)
	return nil
}

// trimToRoom cuts a chunk that would take the task's log past its cap to
// room+1 bytes: still over by one, so the state machine stores the
// log-limit marker and counts the log full exactly as it would for the
// whole chunk, while the bytes it would drop never enter the Raft log.
func trimToRoom(data string, room int) string {
	if len(data) > room {
		return data[:room+1]
	}
	return data
}
