package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// apiValidator checks real answers against the coordinator's own API
// description with kin-openapi: the status must be one the operation
// documents, the content type one it lists, and a JSON body must validate
// against its schema (JSON Schema 2020-12, as OpenAPI 3.1 says); a
// newline-delimited JSON stream is validated line by line.
type apiValidator struct {
	doc   *openapi3.T
	mux   *http.ServeMux    // one entry per operation, to find which a request is
	paths map[string]string // ServeMux pattern → the document's path
}

var errUndocumented = errors.New("no operation of the description matches the request")

func newAPIValidator(t testing.TB, raw []byte) *apiValidator {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load the description: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the description is not valid: %v", err)
	}
	v := &apiValidator{doc: doc, mux: http.NewServeMux(), paths: map[string]string{}}
	for path, item := range doc.Paths.Map() {
		muxPath := path
		if strings.HasSuffix(path, "/{path}") {
			muxPath = strings.TrimSuffix(path, "{path}") + "{path...}" // the one trailing wildcard
		}
		for method := range item.Operations() {
			pattern := method + " " + muxPath
			v.mux.Handle(pattern, http.NotFoundHandler())
			v.paths[pattern] = path
		}
	}
	return v
}

// operations lists the description's operations as "METHOD path".
func (v *apiValidator) operations() []string {
	var out []string
	for pattern, path := range v.paths {
		method, _, _ := strings.Cut(pattern, " ")
		out = append(out, method+" "+path)
	}
	sort.Strings(out)
	return out
}

// check validates one answer to req; it names the operation it matched
// ("METHOD path").
func (v *apiValidator) check(req *http.Request, status int, header http.Header, body []byte) (string, error) {
	_, pattern := v.mux.Handler(req)
	path, ok := v.paths[pattern]
	if !ok {
		return "", fmt.Errorf("%w: %s %s", errUndocumented, req.Method, req.URL.Path)
	}
	method := req.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	name := method + " " + path
	item := v.doc.Paths.Value(path)
	op := item.GetOperation(method)
	route := &routers.Route{Spec: v.doc, Path: path, PathItem: item, Method: method, Operation: op}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	media, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	switch {
	case media == "application/json" || len(body) == 0:
		in.SetBodyBytes(body)
		return name, openapi3filter.ValidateResponse(context.Background(), in)
	case media == "application/x-ndjson":
		return name, v.checkLines(in, body)
	default:
		// Bytes, text, the dashboard's files: the status and the content
		// type must be documented; there is no schema to hold them to.
		in.Options.ExcludeResponseBody = true
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			return name, err
		}
		if resp := op.Responses.Status(status); resp != nil && resp.Value.Content.Get(media) == nil {
			return name, fmt.Errorf("%s answered %d with content type %q, which the description does not list", name, status, media)
		}
		return name, nil
	}
}

// checkRequest validates a request, with its body, against the
// operation it matches: parameters, headers and body. Authentication is
// the coordinator's to check, not the validator's.
func (v *apiValidator) checkRequest(req *http.Request, body []byte) error {
	_, pattern := v.mux.Handler(req)
	path, ok := v.paths[pattern]
	if !ok {
		return fmt.Errorf("%w: %s %s", errUndocumented, req.Method, req.URL.Path)
	}
	item := v.doc.Paths.Value(path)
	route := &routers.Route{Spec: v.doc, Path: path, PathItem: item, Method: req.Method, Operation: item.GetOperation(req.Method)}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: pathParams(path, req.URL.Path), Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

// pathParams reads a request path's parameters by the document's path
// template; the last parameter of /ui/{path} takes the rest.
func pathParams(template, path string) map[string]string {
	tpl, segs := strings.Split(template, "/"), strings.Split(path, "/")
	out := map[string]string{}
	for i, t := range tpl {
		if !strings.HasPrefix(t, "{") || i >= len(segs) {
			continue
		}
		name := strings.Trim(t, "{}")
		if i == len(tpl)-1 {
			out[name] = strings.Join(segs[i:], "/")
		} else {
			out[name] = segs[i]
		}
	}
	return out
}

// checkLines validates a newline-delimited JSON answer: each line
// against the schema of the documented media type.
func (v *apiValidator) checkLines(in *openapi3filter.ResponseValidationInput, body []byte) error {
	in.Options.ExcludeResponseBody = true
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	resp := in.RequestValidationInput.Route.Operation.Responses.Status(in.Status)
	mt := resp.Value.Content.Get("application/x-ndjson")
	if mt == nil || mt.Schema == nil {
		return errors.New("a newline-delimited JSON answer the description does not list")
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var line any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("line %d is not JSON: %w", n, err)
		}
		if err := mt.Schema.Value.VisitJSON(line, openapi3.EnableJSONSchema2020()); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

// validatingProxy is a reverse proxy in front of a coordinator that
// checks every answer passing through against the description, and
// records which operations answered with which statuses and every answer
// that did not validate. Further proxies (via) record into the same.
type validatingProxy struct {
	v   *apiValidator
	srv *httptest.Server

	mu       sync.Mutex
	seen     map[string]map[int]bool // operation → statuses
	failures []string
	answers  int // answers checked
	requests int // accepted requests checked
}

func newValidatingProxy(t testing.TB, v *apiValidator, target string) *validatingProxy {
	t.Helper()
	p := &validatingProxy{v: v, seen: map[string]map[int]bool{}}
	p.srv = p.via(t, target, nil)
	return p
}

// via starts another proxy to target, over transport (nil: the default),
// that records into p.
func (p *validatingProxy) via(t testing.TB, target string, transport http.RoundTripper) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Transport: transport}
	rp.Rewrite = func(pr *httputil.ProxyRequest) {
		// The request as the client sent it, for checkRequest.
		var body []byte
		if pr.Out.Body != nil {
			body, _ = io.ReadAll(pr.Out.Body)
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
		}
		orig := pr.In.Clone(pr.In.Context())
		pr.Out = pr.Out.WithContext(context.WithValue(pr.Out.Context(), sentKey{}, sent{orig, body}))
		pr.SetURL(u)
		pr.SetXForwarded()
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		p.record(resp.Request, resp.StatusCode, resp.Header, body)
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv
}

// sentKey carries, in an outgoing request's context, the request as the
// client sent it.
type sentKey struct{}

type sent struct {
	req  *http.Request
	body []byte
}

func (p *validatingProxy) record(req *http.Request, status int, header http.Header, body []byte) {
	name, err := p.v.check(req, status, header, body)
	var reqErr error
	if s, ok := req.Context().Value(sentKey{}).(sent); ok && status < 300 {
		// A request the coordinator took must be one the description
		// allows (a refused one may well not be).
		reqErr = p.v.checkRequest(s.req, s.body)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers++
	if s, ok := req.Context().Value(sentKey{}).(sent); ok && status < 300 && s.req != nil {
		p.requests++
	}
	if err != nil {
		p.failures = append(p.failures, fmt.Sprintf("%s %s → %d: %v\n  body: %.300s", req.Method, req.URL.Path, status, err, body))
	}
	if reqErr != nil {
		p.failures = append(p.failures, fmt.Sprintf("request %s %s (answered %d) does not match the description: %v", req.Method, req.URL.Path, status, reqErr))
	}
	if name != "" {
		if p.seen[name] == nil {
			p.seen[name] = map[int]bool{}
		}
		p.seen[name][status] = true
	}
}

// exercised lists the operations answered with a 2xx status, and those
// answered with errors only.
func (p *validatingProxy) exercised() (success, errorsOnly []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, statuses := range p.seen {
		ok := false
		for st := range statuses {
			ok = ok || st < 300
		}
		if ok {
			success = append(success, name)
		} else {
			errorsOnly = append(errorsOnly, name)
		}
	}
	sort.Strings(success)
	sort.Strings(errorsOnly)
	return success, errorsOnly
}
