package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// identify settles which worker this agent is before it does anything
// else:
//
//   - a persisted credential is probed with GET /v1/workers/self; if it
//     answers for the persisted worker id, the agent carries on;
//   - if it is refused (401) or answers for another worker, the agent
//     reissues the persisted worker's credential when it holds an admin
//     token, and otherwise stops with a message naming the command an
//     operator should run. It never falls through to a fresh
//     registration: the registry's record is the authority on identity;
//   - with no persisted credential it obtains one by the means configured:
//     allowlist enrollment, an instance token (origin provider), or the
//     join token. If the id is registered already (the credential file
//     was lost), only an admin token can recover it, by reissuing;
//   - a worker that awaits an admin's approval (join token with
//     requires_approval) waits, probing with a growing pause, and says so
//     once; it does not exit.
func (a *Agent) identify(ctx context.Context) error {
	p, ok, err := loadCredential(a.cfg.DataDir)
	if err != nil {
		return err
	}
	if ok {
		return a.resume(ctx, p)
	}
	reg, err := a.firstCredential(ctx)
	if err != nil {
		return err
	}
	if reg.WorkerToken == "" {
		if a.cfg.AdminToken == "" {
			return fmt.Errorf("%w: worker id %q is already registered and this agent holds no credential for it: ask an admin to run `gpulayer worker reissue %s` and put the new credential in %s, or start the agent with GPULAYER_ADMIN_TOKEN set to reissue it itself",
				ErrCredentialRejected, reg.WorkerID, reg.WorkerID, CredentialPath(a.cfg.DataDir))
		}
		a.log.Warn("worker id is registered but no credential is persisted; reissuing it with the admin token", "worker_id", reg.WorkerID)
		return a.reissue(ctx, reg.WorkerID)
	}
	if err := saveCredential(a.cfg.DataDir, persisted{WorkerID: reg.WorkerID, WorkerToken: reg.WorkerToken}); err != nil {
		return err
	}
	a.useCredential(reg.WorkerToken)
	a.log.Info("registered", "worker_id", reg.WorkerID, "status", reg.Status)
	if reg.Status == api.WorkerPending {
		if _, err := a.awaitApproval(ctx, reg.WorkerID); err != nil {
			return err
		}
	}
	a.setWorker(reg.WorkerID)
	return nil
}

// firstCredential obtains the worker's first credential by the one means
// configured: allowlist enrollment, an instance token, or a join token.
func (a *Agent) firstCredential(ctx context.Context) (api.RegisterResponse, error) {
	req := api.RegisterRequest{
		WorkerID:     a.cfg.WorkerID,
		Labels:       a.cfg.Labels,
		Capabilities: a.cfg.Capabilities,
		Executors:    a.cfg.Executors.Names(),
		Devices:      a.deviceView(),
	}
	switch {
	case a.cfg.Enroll:
		reg, err := a.client.Enroll(ctx, api.EnrollRequest{
			ClusterKey: a.cfg.ClusterKey, ExternalWorkerKey: a.cfg.ExternalWorkerKey,
			WorkerID: req.WorkerID, Labels: req.Labels, Capabilities: req.Capabilities, Executors: req.Executors, Devices: req.Devices,
		})
		if err != nil {
			return reg, fmt.Errorf("agent: enroll as %s in cluster %s: %w", a.cfg.ExternalWorkerKey, a.cfg.ClusterKey, err)
		}
		return reg, nil
	case a.cfg.InstanceToken != "":
		a.client.SetToken(a.cfg.InstanceToken)
		req.Origin, req.InstanceID = api.OriginProvider, a.cfg.InstanceID
	case a.cfg.JoinToken != "":
		a.client.SetToken(a.cfg.JoinToken)
	default:
		return api.RegisterResponse{}, ErrNoJoinToken
	}
	hostID := ""
	if req.WorkerID == "" {
		hostID = a.defaultWorkerID()
		req.WorkerID = hostID
	}
	reg, err := a.client.Register(ctx, req)
	if hostID != "" && idTaken(reg, err) {
		// Another worker holds the host's name: the id was only a
		// default, so ask for a generated one rather than reissue.
		a.log.Info("another worker is registered under this host's name; registering under a generated id", "host_name_id", hostID)
		req.WorkerID = ""
		reg, err = a.client.Register(ctx, req)
	}
	if idTaken(reg, err) {
		// identify reissues it, or says how to.
		return api.RegisterResponse{WorkerID: req.WorkerID}, nil
	}
	if err != nil {
		return reg, fmt.Errorf("agent: register: %w", err)
	}
	return reg, nil
}

// idTaken reports whether a register answer says that the id asked for
// belongs to a worker already: 409 conflict, or, from a coordinator of
// an earlier version (a cluster being upgraded), 200 with no credential.
// Either way no credential was handed out and nothing changed.
func idTaken(reg api.RegisterResponse, err error) bool {
	if err != nil {
		return client.IsCode(err, api.CodeConflict)
	}
	return reg.WorkerToken == ""
}

// awaitApproval waits, probing with a growing pause, until an admin
// approves the worker. It says so once, with the command to run. It
// returns the record the first successful probe answered.
func (a *Agent) awaitApproval(ctx context.Context, id string) (api.Worker, error) {
	a.log.Warn("worker awaits approval; it takes no work until an admin runs `gpulayer worker approve "+id+"`", "worker_id", id)
	pause := 200 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return api.Worker{}, ctx.Err()
		case <-a.cfg.Clock.After(pause):
		}
		self, err := a.client.Self(ctx)
		switch {
		case err == nil:
			a.log.Info("worker approved", "worker_id", self.WorkerID)
			return self, nil
		case client.IsCode(err, api.CodeWorkerPending):
		case client.IsCode(err, api.CodeWorkerRevoked):
			return api.Worker{}, fmt.Errorf("%w: worker %s was revoked while awaiting approval", ErrRevoked, id)
		case client.IsCode(err, api.CodeUnauthenticated):
			return api.Worker{}, fmt.Errorf("%w: the coordinator refused the credential of worker %s while it awaited approval", ErrCredentialRejected, id)
		case ctx.Err() != nil:
			return api.Worker{}, ctx.Err()
		default:
			a.log.Debug("probe while awaiting approval failed", "error", err)
		}
		pause = min(2*pause, a.cfg.ApprovalPoll)
	}
}

// resume probes a persisted credential and repairs it if it can.
func (a *Agent) resume(ctx context.Context, p persisted) error {
	a.useCredential(p.WorkerToken)
	self, err := a.client.Self(ctx)
	if client.IsCode(err, api.CodeWorkerPending) {
		self, err = a.awaitApproval(ctx, p.WorkerID)
		if errors.Is(err, ErrRevoked) || errors.Is(err, ErrCredentialRejected) || ctx.Err() != nil {
			return err
		}
	}
	var why string
	switch {
	case err == nil && self.WorkerID == p.WorkerID:
		a.setWorker(p.WorkerID)
		a.log.Info("resumed worker credential", "worker_id", p.WorkerID, "status", self.Status)
		return nil
	case client.IsCode(err, api.CodeWorkerRevoked):
		return fmt.Errorf("%w: worker %s", ErrRevoked, p.WorkerID)
	case err == nil:
		why = fmt.Sprintf("the persisted credential for worker %s authenticates as worker %s", p.WorkerID, self.WorkerID)
	case client.IsCode(err, api.CodeUnauthenticated):
		why = fmt.Sprintf("the coordinator refused the persisted credential for worker %s", p.WorkerID)
	default:
		return fmt.Errorf("agent: probe worker credential: %w", err)
	}
	if a.cfg.AdminToken == "" {
		return fmt.Errorf("%w: %s: ask an admin to run `gpulayer worker reissue %s` and put the new credential in %s, or start the agent with GPULAYER_ADMIN_TOKEN set to reissue it itself",
			ErrCredentialRejected, why, p.WorkerID, CredentialPath(a.cfg.DataDir))
	}
	a.log.Warn("persisted worker credential rejected; reissuing it with the admin token", "worker_id", p.WorkerID, "reason", why)
	return a.reissue(ctx, p.WorkerID)
}

// reissue replaces worker id's credential through the admin route,
// persists the new one and checks that it answers for id.
func (a *Agent) reissue(ctx context.Context, id string) error {
	admin, err := client.New(client.Config{Addrs: a.cfg.Coordinators, CAFile: a.cfg.CAFile, Token: a.cfg.AdminToken})
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	out, err := admin.ReissueWorker(ctx, id)
	if err != nil {
		return fmt.Errorf("%w: reissuing worker %s with the admin token failed: %w", ErrCredentialRejected, id, err)
	}
	if err := saveCredential(a.cfg.DataDir, persisted{WorkerID: out.WorkerID, WorkerToken: out.WorkerToken}); err != nil {
		return err
	}
	a.useCredential(out.WorkerToken)
	self, err := a.client.Self(ctx)
	if err != nil {
		return fmt.Errorf("agent: probe reissued credential of worker %s: %w", id, err)
	}
	if self.WorkerID != id {
		return fmt.Errorf("%w: the reissued credential for worker %s authenticates as worker %s", ErrCredentialRejected, id, self.WorkerID)
	}
	a.setWorker(id)
	a.log.Info("worker credential reissued and resumed", "worker_id", id, "status", self.Status)
	return nil
}

func (a *Agent) setWorker(id string) {
	a.mu.Lock()
	a.workerID = id
	a.mu.Unlock()
}
