package uitest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// TestAPIPage follows the dashboard's footer link to its API view
// without signing in: the view lists one row per route of the
// coordinator, with the credential each takes, and shows the OpenAPI
// document; leaving it brings the sign-in form back. The page asks only
// its own origin and trips no CSP violation or script error.
func TestAPIPage(t *testing.T) {
	browserPath(t)
	h := coordinatortest.Start(t, coordinatortest.Options{})
	b := newBrowser(t, h.URL)

	b.do("open the dashboard", chromedp.Navigate(h.URL+"/ui"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do("follow the footer's API link", chromedp.Click(chromedp.ID("api-link")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-op="submitJob"]`)))
	b.shot("api-01-operations")
	if n := eval[int](b, `document.querySelectorAll("tr.api-row").length`); n != len(h.Server.Routes()) {
		t.Errorf("the API view lists %d operations, want one per route (%d)", n, len(h.Server.Routes()))
	}
	if eval[bool](b, `!document.getElementById("signin").hidden`) {
		t.Error("the sign-in form is shown over the API view")
	}
	row := b.text(`tr[data-op="submitJob"]`)
	for _, want := range []string{"POST", "/v1/jobs", "clientToken (submit)"} {
		if !strings.Contains(row, want) {
			t.Errorf("submitJob's row %q lacks %q", row, want)
		}
	}
	if row := b.text(`tr[data-op="getOpenAPI"]`); !strings.Contains(row, "none") {
		t.Errorf("getOpenAPI's row %q does not say it needs no credential", row)
	}
	doc := eval[string](b, `document.getElementById("api-json").textContent`)
	if !strings.Contains(doc, `"openapi": "3.1.0"`) {
		t.Errorf("the document shown is not the OpenAPI 3.1 one: %.100s", doc)
	}
	b.do("leave for the jobs", chromedp.Evaluate[chromedp.Void](`location.hash = "#jobs"`), chromedp.WaitVisible(chromedp.ID("token")))

	requests, problems := b.seen()
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") {
			t.Errorf("the page asked another origin: %s", u)
		}
	}
	for _, p := range problems {
		t.Errorf("in the page: %s", p)
	}
}
