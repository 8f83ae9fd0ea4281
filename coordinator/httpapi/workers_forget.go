package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
)

// forgetWorker forgets a revoked, offline or unapproved worker that holds
// no task (DELETE /v1/workers/{id}): it leaves the worker list and the
// fleet's GPU counts, its credential goes, and the audit log keeps who
// forgot it. The answer is the record as it was. A worker that is live,
// or still holds a task, is 409; an unknown one 404.
func (s *Server) forgetWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, err := workerIDNoBody(r)
	if err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.ForgetWorker{WorkerID: id, By: p.Name, Source: sourceString(r), Now: s.now()}, "worker forgotten", "worker_id", id, "by", p.Name)
}
