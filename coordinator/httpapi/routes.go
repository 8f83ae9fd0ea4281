package httpapi

import (
	"errors"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Access is who may call a route: a credential kind and, for clients, the
// least role. Also names a second kind that may call it (register takes
// join or instance tokens; artifact reads take clients or workers).
//
// Peer routes are for the other coordinators of the cluster alone: no
// bearer credential reaches them, only a connection whose peer
// certificate was verified (Config.IsPeer). A source address never does.
type Access struct {
	Kind auth.Kind
	Role string
	Also auth.Kind
	Peer bool
}

// Public reports whether the route needs no credential.
func (a Access) Public() bool { return a.Kind == auth.KindNone && !a.Peer }

// Allows reports whether a credential of kind k (and, for a client, with
// the given roles) may call the route.
func (a Access) Allows(k auth.Kind, roles []string) bool {
	if a.Peer {
		return false
	}
	if a.Public() {
		return true
	}
	if k != a.Kind && (a.Also == auth.KindNone || k != a.Also) {
		return false
	}
	if k == auth.KindClient {
		return auth.Principal{Kind: k, Roles: roles}.HasRole(a.Role)
	}
	return true
}

var (
	public       = Access{Kind: auth.KindNone}
	peerOnly     = Access{Peer: true}
	clientRead   = Access{Kind: auth.KindClient, Role: auth.RoleRead}
	clientSubmit = Access{Kind: auth.KindClient, Role: auth.RoleSubmit}
	clientAdmin  = Access{Kind: auth.KindClient, Role: auth.RoleAdmin}
	registrar    = Access{Kind: auth.KindJoin, Also: auth.KindInstance}
	workerOnly   = Access{Kind: auth.KindWorker}
	artifactRead = Access{Kind: auth.KindClient, Role: auth.RoleRead, Also: auth.KindWorker}
	// artifactPut: clients upload; a worker uploads its tasks' outputs
	// (the handler checks it holds a task whose job declares outputs).
	artifactPut = Access{Kind: auth.KindClient, Role: auth.RoleSubmit, Also: auth.KindWorker}
)

// Route is one entry of the route table.
type Route struct {
	Method  string
	Pattern string
	Access  Access
	handle  func(w http.ResponseWriter, r *http.Request, p auth.Principal) error
}

func (s *Server) routeTable() []Route {
	return []Route{
		{"GET", "/v1/status/health", public, s.health},
		{"GET", "/v1/status/leader", public, s.leader},
		{"GET", "/v1/status/peers", public, s.peers},
		{"GET", "/v1/status/self", public, s.statusSelf},
		{"GET", "/v1/openapi.json", public, s.openAPI},
		{"POST", "/v1/operator/raft/peers", clientAdmin, s.addPeer},
		{"DELETE", "/v1/operator/raft/peers/{id}", clientAdmin, s.removePeer},
		{"GET", "/v1/operator/snapshot", clientAdmin, s.saveSnapshot},
		{"PUT", "/v1/operator/snapshot", clientAdmin, s.restoreSnapshot},
		{"GET", "/v1/operator/local/digest", clientAdmin, s.localDigest},
		{"POST", "/v1/operator/gc", clientAdmin, s.collect},
		// A coordinator's own address (nodes.go): another coordinator
		// only, by its peer certificate.
		{"PUT", "/v1/operator/nodes/{id}", peerOnly, s.registerNode},
		// Artifact repair (artifactrepair.go): another coordinator only.
		{"GET", "/v1/operator/local/artifacts/{sha256}", peerOnly, s.serveLocalArtifact},
		{"POST", "/v1/operator/local/artifacts/{sha256}/copy", peerOnly, s.takeArtifactCopy},
		{"PUT", "/v1/operator/artifacts/{sha256}/holders/{id}", peerOnly, s.putArtifactHolder},
		{"GET", "/metrics", public, s.metricsHandler},
		{"GET", "/ui", public, s.dashboard},
		{"GET", "/ui/{path...}", public, s.dashboard},

		{"POST", "/v1/jobs", clientSubmit, s.submitJob},
		{"GET", "/v1/jobs", clientRead, s.listJobs},
		{"GET", "/v1/jobs/{id}", clientRead, s.getJob},
		{"GET", "/v1/jobs/{id}/logs", clientRead, s.jobLogs},
		{"GET", "/v1/jobs/{id}/events", clientRead, s.jobEvents},
		{"POST", "/v1/jobs/{id}/cancel", clientSubmit, s.cancelJob},

		// Exec into a running task (exec.go, execattach.go).
		{"POST", "/v1/tasks/{id}/exec", execOpen, s.openExec},
		{"GET", "/v1/exec/{id}", clientSubmit, s.attachExec},
		{"POST", "/v1/exec/{id}", clientSubmit, s.runExecFile},
		{"GET", "/v1/workers/self/exec/{id}", workerOnly, s.agentExec},

		{"GET", "/v1/workers", clientAdmin, s.listWorkers},
		{"GET", "/v1/workers/{id}", clientAdmin, s.getWorker},
		{"DELETE", "/v1/workers/{id}", clientAdmin, s.forgetWorker},
		{"GET", "/v1/gpus", clientAdmin, s.listGPUs},
		{"POST", "/v1/workers/{id}/reissue", clientAdmin, s.reissueWorker},
		{"POST", "/v1/workers/{id}/revoke", clientAdmin, s.revokeWorker},
		{"POST", "/v1/workers/{id}/drain", clientAdmin, s.drainWorker},
		{"POST", "/v1/workers/{id}/stop", clientAdmin, s.stopWorker},
		{"POST", "/v1/workers/{id}/resume", clientAdmin, s.resumeWorker},
		{"POST", "/v1/workers/{id}/gpus/{uuid}/clear", clientAdmin, s.clearGPU},
		{"POST", "/v1/workers/{id}/gpus/approve", clientAdmin, s.approveGPUs},
		{"POST", "/v1/workers/{id}/devices/{uuid}/cordon", clientAdmin, s.cordonGPU},
		{"POST", "/v1/workers/{id}/devices/{uuid}/uncordon", clientAdmin, s.uncordonGPU},
		{"PUT", "/v1/workers/{id}/devices/{uuid}/mig", clientAdmin, s.setMIGLayout},
		{"DELETE", "/v1/workers/{id}/devices/{uuid}/mig", clientAdmin, s.clearMIGLayout},
		{"POST", "/v1/workers/{id}/devices/{uuid}/drain", clientAdmin, s.drainGPU},

		{"POST", "/v1/teams", clientAdmin, s.createTeam},
		{"GET", "/v1/teams", clientRead, s.listTeams},
		{"GET", "/v1/teams/{name}", clientRead, s.getTeam},
		{"PATCH", "/v1/teams/{name}", clientAdmin, s.updateTeam},
		{"DELETE", "/v1/teams/{name}", clientAdmin, s.deleteTeam},
		{"GET", "/v1/usage", clientRead, s.usage},
		{"GET", "/v1/queue", clientRead, s.queue},

		{"POST", "/v1/groups", clientAdmin, s.createGroup},
		{"GET", "/v1/groups", clientAdmin, s.listGroups},
		{"GET", "/v1/groups/{id}", clientAdmin, s.getGroup},
		{"DELETE", "/v1/groups/{id}", clientAdmin, s.deleteGroup},
		{"POST", "/v1/groups/{id}/members", clientAdmin, s.addGroupMember},
		{"DELETE", "/v1/groups/{id}/members/{kind}/{member}", clientAdmin, s.removeGroupMember},

		{"POST", "/v1/workers/{id}/approve", clientAdmin, s.approveWorker},

		{"POST", "/v1/tokens", clientAdmin, s.createToken},
		{"GET", "/v1/tokens", clientAdmin, s.listTokens},
		{"GET", "/v1/tokens/{id}", clientAdmin, s.getToken},
		{"DELETE", "/v1/tokens/{id}", clientAdmin, s.revokeToken},
		{"POST", "/v1/instance-tokens", clientAdmin, s.createInstanceToken},
		{"GET", "/v1/instance-tokens", clientAdmin, s.listInstanceTokens},

		{"POST", "/v1/clusters", clientAdmin, s.putCluster},
		{"GET", "/v1/clusters", clientAdmin, s.listClusters},
		{"GET", "/v1/clusters/{key}", clientAdmin, s.getCluster},
		{"POST", "/v1/enrollments", clientAdmin, s.createEnrollment},
		{"GET", "/v1/enrollments", clientAdmin, s.listEnrollments},
		{"GET", "/v1/enrollments/{key}", clientAdmin, s.getEnrollment},
		{"POST", "/v1/enrollments/{key}/revoke", clientAdmin, s.revokeEnrollment},

		{"GET", "/v1/audit", clientAdmin, s.listAudit},

		{"PUT", "/v1/artifacts/{sha256}", artifactPut, s.putArtifact},
		{"GET", "/v1/artifacts/{sha256}", artifactRead, s.getArtifact},

		{"POST", "/v1/workers/enroll", public, s.enroll},
		// Single sign-on (sso.go): an ID token, no credential.
		{"POST", api.PathAuthOIDC, public, s.exchangeOIDC},
		// Who a client token is (self.go): its own record.
		{"GET", api.PathAuthSelf, clientRead, s.tokenSelf},
		{"POST", "/v1/workers/register", registrar, s.register},
		{"GET", "/v1/workers/self", workerOnly, s.workerSelf},
		{"POST", "/v1/workers/self/heartbeat", workerOnly, s.heartbeat},
		{"POST", "/v1/workers/self/acquire", workerOnly, s.acquire},
		{"POST", "/v1/workers/self/drain", workerOnly, s.drainSelf},
		{"POST", "/v1/workers/self/resume", workerOnly, s.resumeSelf},
		{"POST", "/v1/workers/self/deregister", workerOnly, s.deregisterSelf},
		{"POST", "/v1/tasks/{id}/start", workerOnly, s.startTask},
		{"POST", "/v1/tasks/{id}/logs", workerOnly, s.taskLogs},
		{"POST", "/v1/tasks/{id}/finish", workerOnly, s.finishTask},
		{"POST", "/v1/tasks/{id}/fail", workerOnly, s.failTask},
		{"POST", "/v1/tasks/{id}/rendezvous", workerOnly, s.rendezvous},
	}
}

// wrap authenticates and authorises before calling the handler, applies
// the per-credential rate limit, and maps the handler's error to the
// protocol's error body. Every refused authentication or authorisation is
// logged (never with the token) and handed to the audit sink.
func (s *Server) wrap(rt Route) http.Handler {
	routeName := rt.Method + " " + rt.Pattern
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p auth.Principal
		if rt.Access.Peer {
			if err := refusePeerless(r); err != nil {
				s.refused(r, routeName, p, err)
				s.writeError(w, r, err)
				return
			}
		} else if !rt.Access.Public() {
			if isArtifactCopy(r) {
				s.awaitApplied(r)
			}
			var err error
			p, err = s.authenticate(r)
			if err == nil {
				err = authorize(p, rt.Access)
			} else if errors.Is(err, state.ErrWorkerPending) {
				// A pending worker is told it is pending on every route a
				// worker may call (artifact reads too); elsewhere it is
				// refused as any worker is.
				if aerr := authorize(p, rt.Access); aerr != nil {
					err = aerr
				}
			}
			if err != nil {
				s.refused(r, routeName, p, err)
				s.writeError(w, r, err)
				return
			}
			if err := s.limitPrincipal(r, p.CredentialID); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if err := rt.handle(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// refusePeerless refuses a request to a peer route that did not come
// from a verified coordinator: 401 without a credential, 403 with one
// (no bearer credential is a coordinator's).
func refusePeerless(r *http.Request) error {
	if infoOf(r).peer {
		return nil
	}
	if r.Header.Get("Authorization") == "" {
		return newError(api.CodeUnauthenticated, "only another coordinator of this cluster, by its peer certificate, may call this route")
	}
	return newError(api.CodeForbidden, "only another coordinator of this cluster, by its peer certificate, may call this route; no bearer credential may")
}

// refused logs and audits a refused authentication or authorisation. p
// holds what could be read from the credential (its kind and id), never
// the secret.
func (s *Server) refused(r *http.Request, route string, p auth.Principal, err error) {
	code := string(codeFor(err))
	s.log.Info("request refused", "request_id", requestID(r), "route", route, "kind", string(p.Kind), "credential_id", p.CredentialID, "source", sourceString(r), "reason", code)
	if code == string(api.CodeWorkerPending) {
		// A valid credential of a worker that awaits approval: its
		// registration is audited, and so will its approval be; its
		// agent's periodic probes meanwhile are not refusals to record.
		return
	}
	s.metrics.refused(kindOf(err))
	s.audit.add(command.AuditEvent{
		Time: s.now(), Kind: "auth.refused", Actor: p.Name, CredentialID: p.CredentialID, CredentialKind: string(p.Kind),
		WorkerID: p.WorkerID, Source: sourceString(r), Route: route, Code: code,
	})
}
