package httpapi

import (
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/internal/openapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The API description: GET /v1/openapi.json answers an OpenAPI 3.1
// document of every route, built once from the route table (paths,
// methods, credentials) and apiOps (bodies and answers, by the Go types
// the handlers use, reflected by internal/openapi). docs/api.md says how
// to use it.

// Security scheme names of the document.
const (
	schemeClient   = "clientToken"
	schemeJoin     = "joinToken"
	schemeInstance = "instanceToken"
	schemeWorker   = "workerToken"
	schemePeer     = "peerCertificate"
)

var securitySchemes = map[string]openapi.SecurityScheme{
	schemeClient: {Type: "http", Scheme: "bearer", BearerFormat: "glc_<id>_<secret>",
		Description: "A client token. Its roles are admin, submit and read; admin implies submit, which implies read. An operation lists the least role it needs; submit cancels only the token's own jobs."},
	schemeJoin: {Type: "http", Scheme: "bearer", BearerFormat: "glj_<id>_<secret>",
		Description: "A join token: registers workers only."},
	schemeInstance: {Type: "http", Scheme: "bearer", BearerFormat: "gli_<id>_<secret>",
		Description: "An instance token: registers the one cloud instance it is bound to (origin provider), once."},
	schemeWorker: {Type: "http", Scheme: "bearer", BearerFormat: "glw_<id>_<secret>",
		Description: "A worker credential, minted at registration or reissue: acts only as its own worker."},
	schemePeer: {Type: "mutualTLS",
		Description: "Another coordinator of the cluster, by its verified peer certificate. No bearer credential reaches these routes."},
}

// security answers the alternatives that may call a route.
func security(a Access) []openapi.SecurityRequirement {
	scheme := func(k auth.Kind) string {
		switch k {
		case auth.KindClient:
			return schemeClient
		case auth.KindJoin:
			return schemeJoin
		case auth.KindInstance:
			return schemeInstance
		case auth.KindWorker:
			return schemeWorker
		}
		return ""
	}
	switch {
	case a.Peer:
		return []openapi.SecurityRequirement{{schemePeer: {}}}
	case a.Public():
		return []openapi.SecurityRequirement{}
	}
	roles := []string{}
	if a.Kind == auth.KindClient {
		roles = []string{a.Role}
	}
	out := []openapi.SecurityRequirement{{scheme(a.Kind): roles}}
	if a.Also != auth.KindNone {
		out = append(out, openapi.SecurityRequirement{scheme(a.Also): {}})
	}
	return out
}

var pathParamPattern = regexp.MustCompile(`\{([a-z0-9_]+)(\.\.\.)?\}`)

// pathParamDocs describes the path parameters by name.
var pathParamDocs = map[string]openapi.Parameter{
	"sha256": {Description: "an artifact's SHA-256, 64 lowercase hex digits", Schema: openapi.Schema{"type": "string", "pattern": "^[0-9a-f]{64}$"}},
	"kind":   {Description: "the member's kind", Schema: openapi.Schema{"type": "string", "enum": []string{api.TargetWorker, api.TargetGroup}}},
	"path":   {Description: "the rest of the URL path: a dashboard file's name"},
	"uuid":   {Description: "a GPU's UUID as its worker reports it"},
	"key":    {Description: "a cluster key or an external worker key"},
	"member": {Description: "the member's id"},
	"id":     {Description: "the object's id"},
}

func pathParams(pattern string) []openapi.Parameter {
	var out []openapi.Parameter
	for _, m := range pathParamPattern.FindAllStringSubmatch(pattern, -1) {
		p := pathParamDocs[m[1]]
		p.Name, p.In, p.Required = m[1], "path", true
		if p.Schema == nil {
			p.Schema = openapi.Schema{"type": "string"}
		}
		out = append(out, p)
	}
	return out
}

// errorStatuses lists the error statuses a route may answer: those of the
// middleware every route passes through, of its credential, its body and
// its path, and those apiOps names for it.
func errorStatuses(pattern string, a Access, op apiOp) []int {
	set := map[int]bool{
		http.StatusTooManyRequests:             true, // rate_limited, per source
		http.StatusRequestHeaderFieldsTooLarge: true,
		http.StatusInternalServerError:         true,
	}
	if strings.HasPrefix(pattern, "/v1/") {
		set[http.StatusBadRequest] = true         // protocol_mismatch, invalid_argument
		set[http.StatusServiceUnavailable] = true // no_leader
		if !strings.HasPrefix(pattern, "/v1/status/") {
			set[http.StatusMisdirectedRequest] = true // not_leader
		}
	}
	if op.body != nil {
		set[http.StatusBadRequest] = true
		set[http.StatusRequestEntityTooLarge] = true
	}
	if len(op.query) > 0 {
		set[http.StatusBadRequest] = true
	}
	if !a.Public() {
		set[http.StatusUnauthorized] = true
		set[http.StatusForbidden] = true
	}
	if strings.Contains(pattern, "{") {
		set[http.StatusNotFound] = true
	}
	for _, s := range op.errs {
		set[s] = true
	}
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// newReflector reflects the wire types as the document shows them.
func newReflector() *openapi.Reflector {
	codes := api.Codes()
	digest := openapi.Schema{"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "a bare SHA-256, as short for {\"sha256\": ...}"}
	return &openapi.Reflector{
		Override: map[reflect.Type]openapi.Schema{
			reflect.TypeFor[api.Code](): {"type": "string", "enum": codes, "description": "the protocol's error code (see the Error response)"},
		},
		Alternatives: map[reflect.Type][]openapi.Schema{
			reflect.TypeFor[api.ArtifactRef]():  {digest},
			reflect.TypeFor[api.TaskArtifact](): {digest},
		},
	}
}

// errorDescription is the Error response's text: the error codes and
// their statuses.
func errorDescription() string {
	var b strings.Builder
	b.WriteString("Every non-2xx answer is {\"error\": {\"code\", \"message\", \"request_id\"}}; " +
		"not_leader carries error.leader, the leader's address. Retry-After is set with rate_limited and no_leader.\n\n" +
		"| code | status |\n| --- | --- |\n")
	for _, c := range api.Codes() {
		fmt.Fprintf(&b, "| %s | %d |\n", c, c.HTTPStatus())
	}
	return b.String()
}

const apiDescription = "The GpuLayer wire protocol, version 1. Every request under /v1/ except /v1/status/* " +
	"carries the header X-GpuLayer-Protocol: 1. Bodies are JSON (UTF-8) and refuse unknown fields; timestamps " +
	"are RFC 3339 strings in UTC. Any coordinator answers any request: a follower forwards writes to the leader. " +
	"See docs/api.md."

var apiTags = []openapi.Tag{
	{Name: "agent", Description: "What a worker's agent calls, with its own credential"},
	{Name: "artifacts", Description: "Content-addressed files: job inputs and task outputs"},
	{Name: "audit", Description: "The replicated audit log"},
	{Name: "dashboard", Description: "The web dashboard's static files"},
	{Name: "enrollment", Description: "Enrollment without a token: clusters and allowlist rows"},
	{Name: "groups", Description: "Groups of workers and groups"},
	{Name: "jobs", Description: "Jobs, their tasks and their output"},
	{Name: "operator", Description: "Cluster administration"},
	{Name: "peer", Description: "Between coordinators only"},
	{Name: "status", Description: "Health and this description, without a credential"},
	{Name: "teams", Description: "Teams: who owns jobs, tokens, quota and usage"},
	{Name: "tokens", Description: "Client, join and instance tokens"},
	{Name: "workers", Description: "Workers, by an admin"},
}

// describeAPI builds the document of routes, each described by ops.
// Every entry of ops is written, so that a stale one shows; a route
// without an entry is missing (TestAPIDescriptionCoversRouteTable).
func describeAPI(routes []Route, ops map[string]apiOp) (*openapi.Document, error) {
	access := map[string]Access{}
	for _, rt := range routes {
		access[rt.Method+" "+rt.Pattern] = rt.Access
	}
	ref := newReflector()
	doc := &openapi.Document{
		OpenAPI: openapi.Version,
		Info:    openapi.Info{Title: "GpuLayer coordinator API", Version: api.ProtocolVersion, Description: apiDescription},
		Tags:    apiTags,
		Paths:   map[string]openapi.PathItem{},
	}
	names := slices.Sorted(maps.Keys(ops))
	for _, name := range names {
		op := ops[name]
		method, pattern, _ := strings.Cut(name, " ")
		a, known := access[name]
		o := &openapi.Operation{OperationID: op.id, Summary: op.summary, Tags: []string{op.tag}, Security: security(a), Responses: map[string]openapi.Response{}}
		if !known {
			o.Description = "not in the coordinator's route table"
			o.Security = []openapi.SecurityRequirement{}
		}
		o.Parameters = append(pathParams(pattern), op.query...)
		if strings.HasPrefix(pattern, "/v1/") && !strings.HasPrefix(pattern, "/v1/status/") {
			o.Parameters = append(o.Parameters, openapi.Parameter{Ref: "#/components/parameters/ProtocolHeader"})
		}
		if b := op.body; b != nil {
			o.RequestBody = &openapi.RequestBody{Required: !b.optional, Content: map[string]openapi.MediaType{b.media: {Schema: bodySchema(ref, b.typ, b.media)}}}
			if b.optional {
				o.RequestBody.Description = "may be empty, which is taken as {}"
			}
		}
		for _, ans := range op.answers {
			r := openapi.Response{Description: ans.desc}
			if ans.media != "" {
				r.Content = map[string]openapi.MediaType{ans.media: {Schema: bodySchema(ref, ans.typ, ans.media)}}
			}
			o.Responses[strconv.Itoa(ans.status)] = r
		}
		for _, st := range errorStatuses(pattern, a, op) {
			o.Responses[strconv.Itoa(st)] = openapi.Response{Ref: "#/components/responses/Error"}
		}
		path := openapi.Route(pattern)
		if doc.Paths[path] == nil {
			doc.Paths[path] = openapi.PathItem{}
		}
		doc.Paths[path][strings.ToLower(method)] = o
	}
	errSchema := ref.Ref(reflect.TypeFor[api.ErrorBody]())
	schemas, err := ref.Defs()
	if err != nil {
		return nil, err
	}
	doc.Components = openapi.Components{
		Schemas: schemas,
		Responses: map[string]openapi.Response{"Error": {
			Description: errorDescription(),
			Headers: map[string]openapi.Header{"Retry-After": {Description: "seconds to wait, with rate_limited and no_leader",
				Schema: openapi.Schema{"type": "integer"}}},
			Content: map[string]openapi.MediaType{mediaJSON: {Schema: errSchema}},
		}},
		Parameters: map[string]openapi.Parameter{"ProtocolHeader": {Name: api.ProtocolHeader, In: "header", Required: true,
			Description: "the protocol version; a request without it, or with another, is refused (400 protocol_mismatch)",
			Schema:      openapi.Schema{"type": "string", "enum": []string{api.ProtocolVersion}}}},
		SecuritySchemes: securitySchemes,
	}
	return doc, nil
}

// bodySchema is a body's schema: its type's, or bytes for a raw one.
func bodySchema(ref *openapi.Reflector, t reflect.Type, media string) openapi.Schema {
	switch {
	case t != nil:
		return ref.Ref(t)
	case media == mediaJSON:
		return openapi.Schema{"type": "object"}
	case strings.HasPrefix(media, "text/"):
		return openapi.Schema{"type": "string"}
	}
	return openapi.Schema{"type": "string", "contentMediaType": media}
}

// openAPI answers GET /v1/openapi.json: the description, built on the
// first call and the same bytes ever after.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	b, err := s.apiDoc()
	if err != nil {
		return fmt.Errorf("API description: %w", err)
	}
	writeRaw(w, http.StatusOK, b)
	return nil
}

// renderAPI builds and renders the description of s's routes.
func (s *Server) renderAPI() ([]byte, error) {
	doc, err := describeAPI(s.routes, apiOps)
	if err != nil {
		return nil, err
	}
	return doc.Marshal()
}
