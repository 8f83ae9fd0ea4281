package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/openapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func apiServer() *Server {
	return New(Config{Store: state.New(), Cluster: oneNode{}})
}

// routeCoverage compares a document's operations with a route table:
// missing are routes the document lacks, extra are operations no route
// serves.
func routeCoverage(routes []Route, doc *openapi.Document) (missing, extra []string) {
	want := map[string]bool{}
	for _, rt := range routes {
		want[rt.Method+" "+openapi.Route(rt.Pattern)] = true
	}
	have := map[string]bool{}
	for _, op := range doc.Operations() {
		have[op] = true
		if !want[op] {
			extra = append(extra, op)
		}
	}
	for op := range want {
		if !have[op] {
			missing = append(missing, op)
		}
	}
	slices.Sort(missing)
	return missing, extra
}

// Every route of the table is in the description, and the description
// names no route the table lacks.
func TestAPIDescriptionCoversRouteTable(t *testing.T) {
	s := apiServer()
	doc, err := describeAPI(s.Routes(), apiOps)
	if err != nil {
		t.Fatal(err)
	}
	missing, extra := routeCoverage(s.Routes(), doc)
	if len(missing) > 0 {
		t.Errorf("routes missing from the API description (add them to apiOps): %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("the API description names routes the route table lacks: %v", extra)
	}
	if n := len(doc.Operations()); n != len(s.Routes()) {
		t.Errorf("%d operations for %d routes", n, len(s.Routes()))
	}
	t.Logf("%d routes, all described", len(s.Routes()))
}

// The coverage check bites both ways: a route dropped from the
// descriptions is reported missing, a description of a route that does
// not exist is reported extra.
func TestAPIDescriptionCoverageCheckBites(t *testing.T) {
	s := apiServer()
	ops := map[string]apiOp{}
	for k, v := range apiOps {
		if k != "POST /v1/jobs" {
			ops[k] = v
		}
	}
	ops["GET /v1/nowhere/{id}"] = apiOp{id: "nowhere", tag: "jobs", answers: []apiAnswer{ok[api.JobResponse]("")}}
	doc, err := describeAPI(s.Routes(), ops)
	if err != nil {
		t.Fatal(err)
	}
	missing, extra := routeCoverage(s.Routes(), doc)
	if !slices.Equal(missing, []string{"POST /v1/jobs"}) {
		t.Errorf("missing = %v, want [POST /v1/jobs]", missing)
	}
	if !slices.Equal(extra, []string{"GET /v1/nowhere/{id}"}) {
		t.Errorf("extra = %v, want [GET /v1/nowhere/{id}]", extra)
	}
}

// Every operation has an id of its own, a tag the document lists, a
// success answer, and a security list matching its route's credential.
func TestAPIDescriptionOperationsAreWellFormed(t *testing.T) {
	s := apiServer()
	doc, err := describeAPI(s.Routes(), apiOps)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]bool{}
	for _, tg := range doc.Tags {
		tags[tg.Name] = true
	}
	ids := map[string]string{}
	for _, rt := range s.Routes() {
		name := rt.Method + " " + rt.Pattern
		op := doc.Paths[openapi.Route(rt.Pattern)][strings.ToLower(rt.Method)]
		if op == nil {
			continue // TestAPIDescriptionCoversRouteTable reports it
		}
		if prev, dup := ids[op.OperationID]; dup || op.OperationID == "" {
			t.Errorf("%s: operationId %q is empty or also %s's", name, op.OperationID, prev)
		}
		ids[op.OperationID] = name
		if len(op.Tags) != 1 || !tags[op.Tags[0]] {
			t.Errorf("%s: tags %v are not one listed tag", name, op.Tags)
		}
		var success bool
		for st := range op.Responses {
			// 101: a WebSocket route (exec) succeeds by switching protocols.
			success = success || strings.HasPrefix(st, "2") || st == "101"
		}
		if !success {
			t.Errorf("%s: no success answer", name)
		}
		switch {
		case rt.Access.Peer:
			if len(op.Security) != 1 || op.Security[0][schemePeer] == nil {
				t.Errorf("%s: a peer route's security is %v", name, op.Security)
			}
		case rt.Access.Public():
			if len(op.Security) != 0 {
				t.Errorf("%s: a public route's security is %v", name, op.Security)
			}
		default:
			if len(op.Security) == 0 {
				t.Errorf("%s: a credentialed route lists no security", name)
			}
		}
	}
}

// The document loads as OpenAPI 3.1 with kin-openapi and passes its
// validation (references resolve, schemas are well formed).
func TestAPIDescriptionIsValidOpenAPI31(t *testing.T) {
	b, err := apiServer().renderAPI()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("document declares %q, not 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi refuses the document: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	schemes := raw["components"].(map[string]any)["securitySchemes"].(map[string]any)
	for _, name := range []string{schemeClient, schemeJoin, schemeInstance, schemeWorker, schemePeer} {
		if schemes[name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
	codes := raw["components"].(map[string]any)["schemas"].(map[string]any)["Error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
	if len(codes) != len(api.Codes()) {
		t.Errorf("error code enum has %d codes, want %d", len(codes), len(api.Codes()))
	}
}

// GET /v1/openapi.json answers without a credential, the same bytes on
// every call and from every server; without the protocol header it is
// refused like any /v1/ route.
func TestOpenAPIRouteServesStableBytes(t *testing.T) {
	get := func(s *Server, header bool) (int, http.Header, []byte) {
		r := httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil)
		if header {
			r.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		return w.Code, w.Result().Header, body
	}
	s := apiServer()
	st, h, first := get(s, true)
	if st != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %s", st, h.Get("Content-Type"))
	}
	for i, srv := range []*Server{s, apiServer()} {
		if _, _, again := get(srv, true); !bytes.Equal(first, again) {
			t.Fatalf("answer %d differs from the first", i+2)
		}
	}
	if !json.Valid(first) || !bytes.Contains(first, []byte(`"openapi": "3.1.0"`)) {
		t.Fatalf("not an OpenAPI 3.1 JSON document: %.200s", first)
	}
	if st, _, body := get(s, false); st != http.StatusBadRequest || !bytes.Contains(body, []byte(api.CodeProtocolMismatch)) {
		t.Fatalf("without the protocol header: %d %s", st, body)
	}
}

// APIDescriptionForTest renders the description for the package's
// external tests.
func APIDescriptionForTest() ([]byte, error) { return apiServer().renderAPI() }
