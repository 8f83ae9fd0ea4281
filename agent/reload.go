package agent

import (
	"context"
	"errors"
	"fmt"
)

// ErrCredentialFileMismatch refuses a credential file that names another
// worker than the one this agent is.
var ErrCredentialFileMismatch = errors.New("agent: the credential file names another worker")

// useCredential makes token the worker credential the agent sends.
func (a *Agent) useCredential(token string) {
	a.mu.Lock()
	a.token = token
	a.mu.Unlock()
	a.client.SetToken(token)
}

// ReloadCredential reads the credential file again and, if it holds a new
// credential for this worker, uses it from the next call on: an operator
// who ran `gpulayer worker reissue` and wrote the new credential there
// needs no restart (`gpulayer agent run` calls this on SIGHUP; the agent
// also does when the coordinator refuses its credential). It reports
// whether the credential changed.
func (a *Agent) ReloadCredential() (bool, error) {
	p, ok, err := loadCredential(a.cfg.DataDir)
	if err != nil {
		return false, fmt.Errorf("agent: %w", err)
	}
	a.mu.Lock()
	id, current := a.workerID, a.token
	a.mu.Unlock()
	switch {
	case !ok:
		return false, fmt.Errorf("agent: no credential file in %s", a.cfg.DataDir)
	case id != "" && p.WorkerID != id:
		return false, fmt.Errorf("%w: %s holds worker %s, this agent is worker %s", ErrCredentialFileMismatch, CredentialPath(a.cfg.DataDir), p.WorkerID, id)
	case p.WorkerToken == current:
		return false, nil
	}
	a.useCredential(p.WorkerToken)
	a.log.Info("new worker credential taken from the credential file", "worker_id", p.WorkerID, "path", CredentialPath(a.cfg.DataDir))
	return true, nil
}

// credentialRefused handles a heartbeat the coordinator refused with 401:
// the credential was reissued (or the cluster's state restored without
// it). A new credential in the file is taken at once; otherwise an agent
// holding an admin token reissues its own; otherwise it says, once, what
// an operator must do, and keeps trying the file.
func (a *Agent) credentialRefused(ctx context.Context) {
	if changed, err := a.ReloadCredential(); changed {
		return
	} else if err != nil {
		a.log.Warn("reloading the worker credential", "error", err)
	}
	a.mu.Lock()
	id, first := a.workerID, !a.refused
	a.refused = true
	a.mu.Unlock()
	if a.cfg.AdminToken != "" {
		a.log.Warn("the coordinator refused the worker credential; reissuing it with the admin token", "worker_id", id)
		if err := a.reissue(ctx, id); err != nil {
			a.log.Error("reissuing the worker credential", "worker_id", id, "error", err)
		}
		return
	}
	if first {
		a.log.Error("the coordinator refuses the worker credential (reissued?): the agent takes a new one from the credential file as soon as it is written there, or on SIGHUP",
			"worker_id", id, "path", CredentialPath(a.cfg.DataDir), "command", "gpulayer worker reissue "+id)
	}
}

// credentialAccepted notes a heartbeat answered.
func (a *Agent) credentialAccepted() {
	a.mu.Lock()
	was := a.refused
	a.refused = false
	a.mu.Unlock()
	if was {
		a.log.Info("the coordinator accepts the worker credential again")
	}
}
