package uitest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/ui"
	"github.com/gpulayer/gpulayer/sdk/api"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

func fetch(t *testing.T, method, url string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// The dashboard's files are served without a credential, each with its
// content type and the security headers; a path under /ui that names no
// file is the protocol's JSON 404 (code not_found), with the same
// headers.
func TestDashboardRoutes(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	cases := []struct {
		name        string
		method      string
		path        string
		status      int
		contentType string
	}{
		{"index without slash", "GET", "/ui", 200, "text/html; charset=utf-8"},
		{"index with slash", "GET", "/ui/", 200, "text/html; charset=utf-8"},
		{"index by name", "GET", "/ui/index.html", 200, "text/html; charset=utf-8"},
		{"head", "HEAD", "/ui/app.js", 200, "text/javascript; charset=utf-8"},
		{"stylesheet", "GET", "/ui/app.css", 200, "text/css; charset=utf-8"},
		{"icon", "GET", "/ui/favicon.svg", 200, "image/svg+xml"},
		{"unknown file", "GET", "/ui/nothing.js", 404, "application/json"},
		{"directory", "GET", "/ui/assets/", 404, "application/json"},
		{"climb out", "GET", "/ui/..%2fui.go", 404, "application/json"},
		{"embedded source", "GET", "/ui/assets.go", 404, "application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := fetch(t, c.method, h.URL+c.path)
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %s", a.status, c.status, a.body)
			}
			if got := a.header.Get("Content-Type"); got != c.contentType {
				t.Errorf("content type %q, want %q", got, c.contentType)
			}
			for k, v := range ui.SecurityHeaders {
				if a.header.Get(k) != v {
					t.Errorf("%s: %q, want %q", k, a.header.Get(k), v)
				}
			}
			if c.status == http.StatusNotFound {
				var e api.ErrorBody
				if err := json.Unmarshal(a.body, &e); err != nil || e.Error == nil || e.Error.Code != api.CodeNotFound {
					t.Errorf("not the protocol's not_found body: %s", a.body)
				}
				return
			}
			if a.header.Get("ETag") == "" || a.header.Get("Cache-Control") != ui.CacheControl {
				t.Errorf("no cache validators: %v", a.header)
			}
		})
	}
}

// Every file the served index references is served too, and nothing it
// references lies on another origin.
func TestIndexReferencesAreServed(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	index := fetch(t, "GET", h.URL+"/ui")
	refs := regexp.MustCompile(`(?:src|href)="([^"#]*)"`).FindAllStringSubmatch(string(index.body), -1)
	if len(refs) == 0 {
		t.Fatal("the index references nothing")
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[1], "/ui/") {
			t.Errorf("the index references %q, outside /ui/", m[1])
			continue
		}
		if a := fetch(t, "GET", h.URL+m[1]); a.status != http.StatusOK || len(a.body) == 0 {
			t.Errorf("%s: status %d", m[1], a.status)
		}
	}
}

// A follower serves the dashboard itself: with the leader and the other
// follower gone, the last node still answers /ui although it cannot
// answer the API.
func TestFollowerServesDashboard(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(10 * time.Second)
	var survivor *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader && survivor == nil {
			survivor = n
			continue
		}
		c.Stop(n)
	}
	a := fetch(t, "GET", survivor.URL+"/ui/")
	if a.status != http.StatusOK || !strings.Contains(string(a.body), "<title>") {
		t.Fatalf("follower without a leader answered /ui with %d: %.200s", a.status, a.body)
	}
}
