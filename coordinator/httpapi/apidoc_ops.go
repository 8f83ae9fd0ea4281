package httpapi

import (
	"net/http"
	"reflect"

	"github.com/gpulayer/gpulayer/internal/openapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// apiOp describes one route of the table for the API description: what
// it takes and what it answers, by the very Go types its handler decodes
// and encodes. The route's credential comes from the route table itself.
// TestAPIDescriptionCoversRouteTable fails when a route of the table has
// no entry here, or an entry names no route.
type apiOp struct {
	id      string // operationId
	tag     string
	summary string
	query   []openapi.Parameter
	body    *apiBody
	answers []apiAnswer
	// errs are the error statuses the route answers beyond those every
	// route of its kind does (see errorStatuses).
	errs []int
}

// apiBody is a request body: a JSON type, or raw bytes of a media type.
type apiBody struct {
	typ      reflect.Type
	media    string
	optional bool // an empty body is taken as {}
}

// apiAnswer is one success answer.
type apiAnswer struct {
	status int
	typ    reflect.Type // nil: raw bytes of media
	media  string
	desc   string
}

const (
	mediaJSON   = "application/json"
	mediaNDJSON = "application/x-ndjson"
	mediaBytes  = "application/octet-stream"
)

func jsonIn[T any]() *apiBody { return &apiBody{typ: reflect.TypeFor[T](), media: mediaJSON} }
func optionalIn[T any]() *apiBody {
	return &apiBody{typ: reflect.TypeFor[T](), media: mediaJSON, optional: true}
}
func emptyIn() *apiBody { return optionalIn[struct{}]() }
func bytesIn() *apiBody { return &apiBody{media: mediaBytes} }
func ok[T any](desc string) apiAnswer {
	return apiAnswer{http.StatusOK, reflect.TypeFor[T](), mediaJSON, desc}
}
func created[T any](desc string) apiAnswer {
	return apiAnswer{http.StatusCreated, reflect.TypeFor[T](), mediaJSON, desc}
}

func queryParam(name, typ, desc string) openapi.Parameter {
	return openapi.Parameter{Name: name, In: "query", Description: desc, Schema: openapi.Schema{"type": typ}}
}

// apiOps is every route's description, keyed by its route table entry
// ("METHOD pattern").
var apiOps = map[string]apiOp{
	// Status and the document itself: no credential.
	"GET /v1/status/health": {id: "getHealth", tag: "status", summary: "This coordinator's health and the leader it knows",
		answers: []apiAnswer{ok[api.HealthResponse]("the node's health")}},
	"GET /v1/status/leader": {id: "getLeader", tag: "status", summary: "The cluster's leader",
		answers: []apiAnswer{ok[api.LeaderResponse]("the leader")}},
	"GET /v1/status/peers": {id: "listPeers", tag: "status", summary: "The Raft servers of the cluster",
		answers: []apiAnswer{ok[api.PeersResponse]("the Raft configuration")}},
	"GET /v1/status/self": {id: "getSelf", tag: "status", summary: "Who this coordinator is",
		answers: []apiAnswer{ok[api.SelfResponse]("this node")}},
	"GET /v1/openapi.json": {id: "getOpenAPI", tag: "status", summary: "This API description (OpenAPI 3.1)",
		answers: []apiAnswer{{http.StatusOK, nil, mediaJSON, "the OpenAPI 3.1 document, the same bytes on every call"}}},
	"GET /metrics": {id: "getMetrics", tag: "status", summary: "Prometheus metrics",
		answers: []apiAnswer{{http.StatusOK, nil, "text/plain", "Prometheus text exposition format"}}},
	"GET /ui": {id: "getDashboard", tag: "dashboard", summary: "The web dashboard's page",
		answers: []apiAnswer{{http.StatusOK, nil, "text/html", "the dashboard"}, {http.StatusNotModified, nil, "", "unchanged since the ETag given in If-None-Match"}}},
	"GET /ui/{path...}": {id: "getDashboardFile", tag: "dashboard", summary: "A file of the web dashboard (path is the rest of the URL path)",
		answers: []apiAnswer{{http.StatusOK, nil, "*/*", "the file, with its content type"}, {http.StatusNotModified, nil, "", "unchanged since the ETag given in If-None-Match"}},
		errs:    []int{http.StatusNotFound}},

	// Operator routes.
	"POST /v1/operator/raft/peers": {id: "addRaftPeer", tag: "operator", summary: "Add a coordinator to the Raft configuration as a voter",
		body: jsonIn[api.RaftPeerRequest](), answers: []apiAnswer{ok[api.PeersResponse]("the configuration after the change")}},
	"DELETE /v1/operator/raft/peers/{id}": {id: "removeRaftPeer", tag: "operator", summary: "Remove a coordinator from the Raft configuration",
		answers: []apiAnswer{ok[api.PeersResponse]("the configuration after the change")}},
	"GET /v1/operator/snapshot": {id: "saveSnapshot", tag: "operator", summary: "Download the whole replicated state",
		answers: []apiAnswer{{http.StatusOK, nil, mediaBytes, "a snapshot, as Raft stores them"}}},
	"PUT /v1/operator/snapshot": {id: "restoreSnapshot", tag: "operator", summary: "Replace the whole state with an uploaded snapshot",
		body: bytesIn(), answers: []apiAnswer{ok[api.RestoreResponse]("restored")}, errs: []int{http.StatusConflict}},
	"GET /v1/operator/local/digest": {id: "getLocalDigest", tag: "operator", summary: "This node's applied index and a digest of its state",
		answers: []apiAnswer{ok[api.DigestResponse]("this node's digest")}},
	"POST /v1/operator/gc": {id: "collectGarbage", tag: "operator", summary: "Remove the finished jobs due under the retention now",
		body: optionalIn[api.GCRequest](), answers: []apiAnswer{ok[api.GCResponse]("how many jobs were removed")}},
	"PUT /v1/operator/nodes/{id}": {id: "registerNode", tag: "peer", summary: "A coordinator records the HTTP address it is reached at",
		body: jsonIn[api.NodeAddrRequest](), answers: []apiAnswer{ok[api.SelfResponse]("the recorded address")}},
	"GET /v1/operator/local/artifacts/{sha256}": {id: "getLocalArtifact", tag: "peer", summary: "This node's own copy of an artifact",
		answers: []apiAnswer{{http.StatusOK, nil, mediaBytes, "the artifact's bytes"}}},
	"POST /v1/operator/local/artifacts/{sha256}/copy": {id: "copyArtifact", tag: "peer", summary: "Make sure this node holds a verified copy of an artifact",
		body: jsonIn[artifactCopyRequest](), answers: []apiAnswer{created[api.ArtifactResponse]("this node holds the copy")}},
	"PUT /v1/operator/artifacts/{sha256}/holders/{id}": {id: "putArtifactHolder", tag: "peer", summary: "A coordinator reports whether it holds an artifact",
		body: jsonIn[holderRequest](), answers: []apiAnswer{ok[api.ArtifactResponse]("the artifact's record")}},

	// Jobs.
	"POST /v1/jobs": {id: "submitJob", tag: "jobs", summary: "Submit a job",
		body:    jsonIn[api.JobSpec](),
		answers: []apiAnswer{created[api.JobResponse]("the new job"), ok[api.JobResponse]("the job already submitted under this idempotency key with an equal body")},
		errs:    []int{http.StatusConflict}},
	"GET /v1/jobs": {id: "listJobs", tag: "jobs", summary: "One page of the jobs the caller may see, newest first",
		query: []openapi.Parameter{
			queryParam("limit", "integer", "page size, 1 to 1000 (default 100)"),
			queryParam("after", "string", "the next cursor of the previous page"),
		},
		answers: []apiAnswer{ok[api.JobList]("a page of jobs and the cursor of the next (empty on the last page)")}},
	"GET /v1/jobs/{id}": {id: "getJob", tag: "jobs", summary: "A job with its tasks",
		answers: []apiAnswer{ok[api.JobResponse]("the job")}},
	"GET /v1/jobs/{id}/logs": {id: "getJobLogs", tag: "jobs", summary: "A job's output, as newline-delimited JSON",
		query:   []openapi.Parameter{queryParam("follow", "string", "1 or true: keep the answer open until the job ends (the trailer X-Gpulayer-Stream-End says why it ended)")},
		answers: []apiAnswer{{http.StatusOK, reflect.TypeFor[api.LogEntry](), mediaNDJSON, "one LogEntry per line"}},
		errs:    []int{http.StatusTooManyRequests}},
	"GET /v1/jobs/{id}/events": {id: "getJobEvents", tag: "jobs", summary: "A job's events, oldest first: submission, each attempt's assignment, start, preemption and end, checkpoints saved, cancellations",
		answers: []apiAnswer{ok[api.JobEvents]("the job's events (the latest MaxJobEvents; truncated when older ones were left out)")}},
	"POST /v1/tasks/{id}/exec": {id: "openExec", tag: "jobs", summary: "Open an exec session in a running task (submit role of the job's team, or admin; anyone else 404); attach at attach_path",
		body: jsonIn[api.ExecRequest](), answers: []apiAnswer{created[api.ExecSession]("the session, to attach to within its deadline")},
		errs: []int{http.StatusConflict, http.StatusTooManyRequests}},
	"GET /v1/exec/{id}": {id: "attachExec", tag: "jobs", summary: "Attach to an exec session as a WebSocket (Upgrade); frames are ExecFrame JSON text messages",
		answers: []apiAnswer{{http.StatusSwitchingProtocols, nil, mediaBytes, "the WebSocket of the session"}}},
	"POST /v1/exec/{id}": {id: "runExec", tag: "jobs", summary: "Attach to a non-tty exec session without a WebSocket: the body is the whole stdin, the answer its output frames",
		body:    bytesIn(),
		answers: []apiAnswer{{http.StatusOK, reflect.TypeFor[api.ExecFrame](), mediaNDJSON, "one ExecFrame per line, exit or error last"}}},
	"GET /v1/workers/self/exec/{id}": {id: "agentExec", tag: "agent", summary: "The agent's end of an exec session its heartbeat offered, as a WebSocket",
		answers: []apiAnswer{{http.StatusSwitchingProtocols, nil, mediaBytes, "the WebSocket of the session"}}},
	"POST /v1/jobs/{id}/cancel": {id: "cancelJob", tag: "jobs", summary: "Cancel a job (submit role: its own jobs only)",
		body: emptyIn(), answers: []apiAnswer{ok[api.JobResponse]("the job as cancelled")}, errs: []int{http.StatusConflict}},

	// Workers, by an admin.
	"GET /v1/workers": {id: "listWorkers", tag: "workers", summary: "Every registered worker",
		answers: []apiAnswer{ok[api.WorkerList]("the workers")}},
	"GET /v1/workers/{id}": {id: "getWorker", tag: "workers", summary: "A worker",
		answers: []apiAnswer{ok[api.WorkerResponse]("the worker")}},
	"POST /v1/workers/{id}/reissue": {id: "reissueWorker", tag: "workers", summary: "Give a worker a new credential; the old one is dead at once",
		body: emptyIn(), answers: []apiAnswer{ok[api.ReissueResponse]("the new credential, shown this once")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/revoke": {id: "revokeWorker", tag: "workers", summary: "Revoke a worker",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the revoked worker")}},
	"POST /v1/workers/{id}/drain": {id: "drainWorker", tag: "workers", summary: "Give a worker no new task; stop what is left after the deadline",
		body: optionalIn[api.DrainRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, draining")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/stop": {id: "stopWorker", tag: "workers", summary: "Stop a worker's tasks (requeued) and its agent",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, stopping")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/resume": {id: "resumeWorker", tag: "workers", summary: "Make a drained or stopped worker ready again",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, ready")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/gpus/{uuid}/clear": {id: "clearGPU", tag: "workers", summary: "Take a GPU out of fault or quarantine",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, the GPU in clear_gpus until its agent reports it back")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/gpus/approve": {id: "approveGPUs", tag: "workers", summary: "Approve a worker's current GPU inventory",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/devices/{uuid}/cordon": {id: "cordonGPU", tag: "workers", summary: "Cordon one GPU of a worker: no new task on it, running ones go on (audited)",
		body: optionalIn[api.CordonRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, the GPU cordoned")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/devices/{uuid}/uncordon": {id: "uncordonGPU", tag: "workers", summary: "Lift a GPU's cordon (audited)",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, the GPU offered again")}, errs: []int{http.StatusConflict}},
	"PUT /v1/workers/{id}/devices/{uuid}/mig": {id: "setMIGLayout", tag: "workers", summary: "Ask for a GPU's MIG layout: its agent drains the GPU, repartitions it and reports it (audited)",
		body: jsonIn[api.MIGLayoutRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, the GPU's mig_layout pending")}, errs: []int{http.StatusConflict}},
	"DELETE /v1/workers/{id}/devices/{uuid}/mig": {id: "clearMIGLayout", tag: "workers", summary: "Drop a GPU's MIG layout request and take the GPU as it is (audited)",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/devices/{uuid}/drain": {id: "drainGPU", tag: "workers", summary: "Drain one GPU of a worker: cordon it, stop the tasks on it and requeue them without using an attempt (audited)",
		body: optionalIn[api.CordonRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, the GPU cordoned; its tasks asked to stop")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/{id}/approve": {id: "approveWorker", tag: "workers", summary: "Approve a worker that awaits approval",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, ready")}, errs: []int{http.StatusConflict}},
	"DELETE /v1/workers/{id}": {id: "forgetWorker", tag: "workers", summary: "Forget a revoked, offline or unapproved worker that holds no task (audited)",
		answers: []apiAnswer{ok[api.WorkerResponse]("the worker as it was")}, errs: []int{http.StatusConflict}},
	"GET /v1/gpus": {id: "listGPUs", tag: "workers", summary: "Every GPU of every worker, with its health and the tasks that hold it",
		query:   []openapi.Parameter{queryParam("worker", "string", "a worker id: only that worker's GPUs")},
		answers: []apiAnswer{ok[api.GPUList]("the GPUs")}, errs: []int{http.StatusNotFound}},

	// Teams.
	"POST /v1/teams": {id: "createTeam", tag: "teams", summary: "Create a team with its weight, quota and borrow limit (audited)",
		body: jsonIn[api.CreateTeamRequest](), answers: []apiAnswer{created[api.TeamResponse]("the new team")}, errs: []int{http.StatusConflict}},
	"GET /v1/teams": {id: "listTeams", tag: "teams", summary: "Every team to an admin; its own team to another client",
		answers: []apiAnswer{ok[api.TeamList]("the teams, with their live figures")}},
	"GET /v1/teams/{name}": {id: "getTeam", tag: "teams", summary: "A team with its live figures (another team's is not found)",
		answers: []apiAnswer{ok[api.TeamResponse]("the team")}, errs: []int{http.StatusNotFound}},
	"PATCH /v1/teams/{name}": {id: "updateTeam", tag: "teams", summary: "Change a team's weight, quota or borrow limit (audited)",
		body: jsonIn[api.UpdateTeamRequest](), answers: []apiAnswer{ok[api.TeamResponse]("the team")}, errs: []int{http.StatusNotFound}},
	"DELETE /v1/teams/{name}": {id: "deleteTeam", tag: "teams", summary: "Delete a team with no unfinished job, revoking its client tokens (audited)",
		answers: []apiAnswer{ok[api.TeamResponse]("the team as it was")}, errs: []int{http.StatusNotFound, http.StatusConflict}},

	"GET /v1/usage": {id: "getUsage", tag: "teams", summary: "GPU time by team and one dimension over a range (a client sees its team's)",
		query: []openapi.Parameter{
			queryParam("from", "string", "RFC 3339: the range's start (default: 30 days before to)"),
			queryParam("to", "string", "RFC 3339: the range's end (default: now)"),
			queryParam("group_by", "string", "team (default), gpu_model, user or job"),
		},
		answers: []apiAnswer{ok[api.UsageResponse]("the rows")}},
	"GET /v1/queue": {id: "getQueue", tag: "teams", summary: "The order the scheduler serves, per team, with each task's reason (a client sees its team's)",
		query: []openapi.Parameter{
			queryParam("team", "string", "one team (a client: only its own; default: a client's team, an admin's every team)"),
			queryParam("limit", "integer", "tasks listed per team, 1 to 1000 (default 50)"),
		},
		answers: []apiAnswer{ok[api.QueueResponse]("the teams in order, each with its first tasks")}, errs: []int{http.StatusNotFound}},

	// Groups.
	"POST /v1/groups": {id: "createGroup", tag: "groups", summary: "Create a group of workers and groups",
		body: jsonIn[api.CreateGroupRequest](), answers: []apiAnswer{created[api.GroupResponse]("the new group")}, errs: []int{http.StatusConflict}},
	"GET /v1/groups": {id: "listGroups", tag: "groups", summary: "Every group",
		answers: []apiAnswer{ok[api.GroupList]("the groups")}},
	"GET /v1/groups/{id}": {id: "getGroup", tag: "groups", summary: "A group",
		answers: []apiAnswer{ok[api.GroupResponse]("the group")}},
	"DELETE /v1/groups/{id}": {id: "deleteGroup", tag: "groups", summary: "Delete a group",
		answers: []apiAnswer{ok[api.GroupResponse]("the deleted group")}, errs: []int{http.StatusConflict}},
	"POST /v1/groups/{id}/members": {id: "addGroupMember", tag: "groups", summary: "Add a member (idempotent)",
		body: jsonIn[api.GroupMember](), answers: []apiAnswer{ok[api.GroupResponse]("the group")}, errs: []int{http.StatusConflict}},
	"DELETE /v1/groups/{id}/members/{kind}/{member}": {id: "removeGroupMember", tag: "groups", summary: "Remove a member (idempotent)",
		answers: []apiAnswer{ok[api.GroupResponse]("the group")}},

	// Credentials and enrollment.
	"POST /v1/tokens": {id: "createToken", tag: "tokens", summary: "Create a client or join token",
		body: jsonIn[api.CreateTokenRequest](), answers: []apiAnswer{created[api.CreateTokenResponse]("the record and the token, shown this once")}, errs: []int{http.StatusConflict}},
	"GET /v1/tokens": {id: "listTokens", tag: "tokens", summary: "Client, join and instance tokens (never a secret)",
		query:   []openapi.Parameter{queryParam("kind", "string", "client, join or instance: only tokens of that kind")},
		answers: []apiAnswer{ok[api.TokenList]("the tokens")}},
	"GET /v1/tokens/{id}": {id: "getToken", tag: "tokens", summary: "A token's record",
		answers: []apiAnswer{ok[api.TokenResponse]("the token's record")}},
	"DELETE /v1/tokens/{id}": {id: "revokeToken", tag: "tokens", summary: "Revoke a token",
		answers: []apiAnswer{ok[api.TokenResponse]("the revoked token's record")}},
	"GET /v1/instance-tokens": {id: "listInstanceTokens", tag: "tokens", summary: "Instance tokens (never a secret), as GET /v1/tokens?kind=instance lists them",
		answers: []apiAnswer{ok[api.TokenList]("the instance tokens")}},
	"POST /v1/instance-tokens": {id: "createInstanceToken", tag: "tokens", summary: "Create a single-use token bound to one cloud instance",
		body: jsonIn[api.CreateInstanceTokenRequest](), answers: []apiAnswer{created[api.CreateTokenResponse]("the record and the token, shown this once")}, errs: []int{http.StatusConflict}},
	"POST /v1/clusters": {id: "putCluster", tag: "enrollment", summary: "Create or update an enrollment cluster",
		body:    jsonIn[api.ClusterRequest](),
		answers: []apiAnswer{created[api.ClusterResponse]("the new cluster"), ok[api.ClusterResponse]("the updated cluster")}},
	"GET /v1/clusters": {id: "listClusters", tag: "enrollment", summary: "Every enrollment cluster",
		answers: []apiAnswer{ok[api.ClusterList]("the clusters")}},
	"GET /v1/clusters/{key}": {id: "getCluster", tag: "enrollment", summary: "An enrollment cluster",
		answers: []apiAnswer{ok[api.ClusterResponse]("the cluster")}},
	"POST /v1/enrollments": {id: "createEnrollment", tag: "enrollment", summary: "Allow a machine to enroll",
		body: jsonIn[api.EnrollmentRequest](), answers: []apiAnswer{created[api.EnrollmentResponse]("the allowlist row")}, errs: []int{http.StatusConflict}},
	"GET /v1/enrollments": {id: "listEnrollments", tag: "enrollment", summary: "Every allowlist row",
		answers: []apiAnswer{ok[api.EnrollmentList]("the rows")}},
	"GET /v1/enrollments/{key}": {id: "getEnrollment", tag: "enrollment", summary: "An allowlist row",
		answers: []apiAnswer{ok[api.EnrollmentResponse]("the row")}},
	"POST /v1/enrollments/{key}/revoke": {id: "revokeEnrollment", tag: "enrollment", summary: "Revoke an allowlist row and the worker enrolled through it",
		body: emptyIn(), answers: []apiAnswer{ok[api.EnrollmentResponse]("the revoked row")}},
	"GET /v1/audit": {id: "listAudit", tag: "audit", summary: "Audit events, oldest first",
		query: []openapi.Parameter{
			queryParam("since", "string", "RFC 3339 time: events at or after it"),
			queryParam("until", "string", "RFC 3339 time: events before it"),
			queryParam("kind", "string", "comma-separated kinds or areas (token matches every token.* event)"),
			queryParam("after", "integer", "the seq to page from (next_after of the previous page)"),
			queryParam("limit", "integer", "events per page, 1 to 10000 (default 1000)"),
		},
		answers: []apiAnswer{ok[api.AuditList]("the events")}},

	// Artifacts.
	"PUT /v1/artifacts/{sha256}": {id: "putArtifact", tag: "artifacts", summary: "Upload an artifact; its bytes must hash to the name",
		body:    bytesIn(),
		answers: []apiAnswer{created[api.ArtifactResponse]("stored"), ok[api.ArtifactResponse]("already stored")},
		errs:    []int{http.StatusConflict}},
	"GET /v1/artifacts/{sha256}": {id: "getArtifact", tag: "artifacts", summary: "Download an artifact",
		answers: []apiAnswer{{http.StatusOK, nil, mediaBytes, "the artifact's bytes"}}},

	// Workers, as themselves.
	"POST /v1/auth/oidc": {id: "exchangeOIDC", tag: "tokens", summary: "Exchange an OpenID Connect ID token for a client token of the mapped team and roles (no credential; 404 where single sign-on is not configured)",
		body:    jsonIn[api.OIDCExchangeRequest](),
		answers: []apiAnswer{created[api.OIDCExchangeResponse]("the client token, shown this once, with its expiry, team, roles and subject")},
		errs:    []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}},
	"GET /v1/auth/self": {id: "getTokenSelf", tag: "tokens", summary: "The calling client token's own record: name, team, roles and expiry (never its secret)",
		answers: []apiAnswer{ok[api.TokenResponse]("the caller's token record")}},
	"POST /v1/workers/enroll": {id: "enrollWorker", tag: "agent", summary: "Enroll through the allowlist (no credential: the cluster key, worker key and source address are checked)",
		body: jsonIn[api.EnrollRequest](), answers: []apiAnswer{created[api.RegisterResponse]("the worker and its credential, shown this once")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/register": {id: "registerWorker", tag: "agent", summary: "Register a worker with a join or instance token",
		body: optionalIn[api.RegisterRequest](),
		answers: []apiAnswer{
			created[api.RegisterResponse]("the new worker and its credential, shown this once"),
			ok[existingWorkerAnswer]("the id is registered already: no credential is handed out"),
		}},
	"GET /v1/workers/self": {id: "getWorkerSelf", tag: "agent", summary: "The calling worker's record",
		answers: []apiAnswer{ok[api.Worker]("the worker")}},
	"POST /v1/workers/self/heartbeat": {id: "heartbeat", tag: "agent", summary: "Renew the worker's leases and report its state",
		body: optionalIn[api.HeartbeatRequest](), answers: []apiAnswer{ok[api.HeartbeatResponse]("what the worker must do")}},
	"POST /v1/workers/self/acquire": {id: "acquire", tag: "agent", summary: "Take tasks (a long poll of at most 30 s)",
		body: optionalIn[api.AcquireRequest](), answers: []apiAnswer{ok[api.AcquireResponse]("tasks, nothing, or a command")}},
	"POST /v1/workers/self/drain": {id: "drainSelf", tag: "agent", summary: "The worker drains itself",
		body: optionalIn[api.DrainRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, draining")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/self/resume": {id: "resumeSelf", tag: "agent", summary: "The worker resumes after its own drain",
		body: emptyIn(), answers: []apiAnswer{ok[api.WorkerResponse]("the worker, ready")}, errs: []int{http.StatusConflict}},
	"POST /v1/workers/self/deregister": {id: "deregisterSelf", tag: "agent", summary: "Drain, then forget the worker",
		body: optionalIn[api.DrainRequest](), answers: []apiAnswer{ok[api.WorkerResponse]("the worker as the request left it")}, errs: []int{http.StatusConflict}},
	"POST /v1/tasks/{id}/start": {id: "startTask", tag: "agent", summary: "The task's process started",
		body: jsonIn[api.StartRequest](), answers: []apiAnswer{ok[api.TaskResponse]("the task")}, errs: []int{http.StatusConflict}},
	"POST /v1/tasks/{id}/logs": {id: "appendTaskLogs", tag: "agent", summary: "Append a chunk of the task's output (a seq seen before is ignored)",
		body: jsonIn[api.LogsRequest](), answers: []apiAnswer{ok[api.LogsResponse]("whether the chunk was kept")}, errs: []int{http.StatusConflict}},
	"POST /v1/tasks/{id}/finish": {id: "finishTask", tag: "agent", summary: "The task's process ended (replayed under its submission_id: the first answer)",
		body: jsonIn[api.FinishRequest](), answers: []apiAnswer{ok[api.TaskResponse]("the task")}, errs: []int{http.StatusConflict}},
	"POST /v1/tasks/{id}/fail": {id: "failTask", tag: "agent", summary: "The task could not run",
		body: jsonIn[api.FailRequest](), answers: []apiAnswer{ok[api.TaskResponse]("the task")}, errs: []int{http.StatusConflict}},
	"POST /v1/tasks/{id}/rendezvous": {id: "rendezvous", tag: "agent", summary: "A gang member waits for its peers (a long poll of at most 30 s)",
		body: jsonIn[api.RendezvousRequest](), answers: []apiAnswer{ok[api.RendezvousResponse]("the peers once every member called, else ready false")}, errs: []int{http.StatusConflict}},
}
