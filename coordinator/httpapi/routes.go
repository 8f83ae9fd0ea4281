package httpapi

import (
	"errors"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// Access is who may call a route: a credential kind and, for clients, the
// least role.
type Access struct {
	Kind auth.Kind
	Role string
}

var (
	public       = Access{Kind: auth.KindNone}
	clientRead   = Access{Kind: auth.KindClient, Role: auth.RoleRead}
	clientSubmit = Access{Kind: auth.KindClient, Role: auth.RoleSubmit}
	clientAdmin  = Access{Kind: auth.KindClient, Role: auth.RoleAdmin}
	joinOnly     = Access{Kind: auth.KindJoin}
	workerOnly   = Access{Kind: auth.KindWorker}
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
		{"POST", "/v1/operator/raft/peers", clientAdmin, s.addPeer},
		{"DELETE", "/v1/operator/raft/peers/{id}", clientAdmin, s.removePeer},
		{"GET", "/v1/operator/snapshot", clientAdmin, s.saveSnapshot},
		{"PUT", "/v1/operator/snapshot", clientAdmin, s.restoreSnapshot},
		{"GET", "/v1/operator/local/digest", clientAdmin, s.localDigest},
		{"GET", "/metrics", public, s.metricsHandler},

		{"POST", "/v1/jobs", clientSubmit, s.submitJob},
		{"GET", "/v1/jobs", clientRead, s.listJobs},
		{"GET", "/v1/jobs/{id}", clientRead, s.getJob},
		{"GET", "/v1/jobs/{id}/logs", clientRead, s.jobLogs},
		{"POST", "/v1/jobs/{id}/cancel", clientSubmit, s.cancelJob},

		{"GET", "/v1/workers", clientAdmin, s.listWorkers},
		{"GET", "/v1/workers/{id}", clientAdmin, s.getWorker},
		{"POST", "/v1/workers/{id}/reissue", clientAdmin, s.reissueWorker},
		{"POST", "/v1/workers/{id}/revoke", clientAdmin, s.revokeWorker},

		{"POST", "/v1/groups", clientAdmin, s.createGroup},
		{"GET", "/v1/groups", clientAdmin, s.listGroups},
		{"GET", "/v1/groups/{id}", clientAdmin, s.getGroup},
		{"DELETE", "/v1/groups/{id}", clientAdmin, s.deleteGroup},
		{"POST", "/v1/groups/{id}/members", clientAdmin, s.addGroupMember},
		{"DELETE", "/v1/groups/{id}/members/{kind}/{member}", clientAdmin, s.removeGroupMember},

		{"POST", "/v1/workers/register", joinOnly, s.register},
		{"GET", "/v1/workers/self", workerOnly, s.workerSelf},
		{"POST", "/v1/workers/self/heartbeat", workerOnly, s.heartbeat},
		{"POST", "/v1/workers/self/acquire", workerOnly, s.acquire},
		{"POST", "/v1/tasks/{id}/start", workerOnly, s.startTask},
		{"POST", "/v1/tasks/{id}/logs", workerOnly, s.taskLogs},
		{"POST", "/v1/tasks/{id}/finish", workerOnly, s.finishTask},
		{"POST", "/v1/tasks/{id}/fail", workerOnly, s.failTask},
	}
}

// wrap authenticates and authorises before calling the handler, and maps
// the handler's error to the protocol's error body.
func (s *Server) wrap(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p auth.Principal
		if rt.Access.Kind != auth.KindNone {
			var err error
			p, err = s.authenticate(r)
			if err == nil {
				err = authorize(p, rt.Access)
			} else if errors.Is(err, state.ErrWorkerPending) && rt.Access.Kind != auth.KindWorker {
				err = authorize(p, rt.Access)
			}
			if err != nil {
				s.log.Info("request refused", "request_id", requestID(r), "route", rt.Pattern, "kind", string(p.Kind), "credential_id", p.CredentialID, "reason", string(codeFor(err)))
				s.writeError(w, r, err)
				return
			}
		}
		if err := rt.handle(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}
