package uitest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// jobRow selects a job's row in the jobs list.
func jobRow(id string) chromedp.CSS { return chromedp.CSS(`tr[data-job="` + id + `"]`) }

// logsContain is an XPath search for the logs pane holding s.
func logsContain(s string) string { return `//pre[@id="logs"][contains(., "` + s + `")]` }

// openJob shows a job's page through the page's own routing (a new
// navigation would reload the page and forget the token).
func openJob(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`location.hash = "#job/` + id + `"`)
}

func showView(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(`#nav a[data-view="` + name + `"]`))
}

// TestDashboard signs in as a user would, with a read token and then with
// the admin token, and checks each panel in headless Chromium: jobs and
// paging, a failed job's reason and logs, live logs of a running job,
// task output that looks like HTML shown as text, the admin panels'
// answer to a read token, workers with GPUs and health, the audit log and
// the cluster. Throughout, the page may ask only its own origin, keep the
// token in no storage, and trip no CSP violation, script error or
// dialog. Screenshots of each step go to UI_SHOTS_DIR.
func TestDashboard(t *testing.T) {
	browserPath(t) // skip before starting anything when there is none
	start := time.Now()
	f := newFleet(t)
	b := newBrowser(t, f.h.URL)

	b.do("open the dashboard", chromedp.Navigate(f.h.URL+"/ui"), chromedp.WaitVisible(chromedp.ID("token")))
	b.shot("01-sign-in")

	forged := "glc_0123456789abcdef_" + strings.Repeat("ab", 32)
	b.do("sign in with an unknown token", chromedp.SendKeys(chromedp.ID("token"), forged), chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("signin-error")))
	if msg := b.text("#signin-error"); !strings.Contains(msg, "does not accept") {
		t.Errorf("unknown token: sign-in says %q", msg)
	}

	b.do("sign in with a read token", chromedp.Evaluate[chromedp.Void](`document.getElementById("token").value = ""`), chromedp.SendKeys(chromedp.ID("token"), f.readToken),
		chromedp.Click(chromedp.ID("signin-button")), chromedp.WaitVisible(jobRow(f.succeeded)), chromedp.WaitVisible(chromedp.CSS("#live.ok")))
	rows := eval[[]string](b, `Array.from(document.querySelectorAll("tr.job-row"), r => r.dataset.job)`)
	if len(rows) != 25 {
		t.Errorf("first page lists %d jobs, want 25", len(rows))
	}
	for _, id := range []string{f.succeeded, f.failed, f.xssJob, f.running, f.pending} {
		if !slices.Contains(rows, id) {
			t.Errorf("job %s is not on the first page", id)
		}
	}
	b.shot("02-jobs")

	b.do("page to older jobs", chromedp.Click(chromedp.ID("older")), chromedp.WaitVisible(jobRow(f.oldest)))
	if n := eval[int](b, `document.querySelectorAll("tr.job-row").length`); n != fillers+5-25 {
		t.Errorf("second page lists %d jobs, want %d", n, fillers+5-25)
	}
	b.do("page back", chromedp.Click(chromedp.ID("newer")), chromedp.WaitVisible(jobRow(f.succeeded)))

	b.do("open the failed job", chromedp.Click(chromedp.CSS(`tr[data-job="`+f.failed+`"] a`)),
		chromedp.WaitVisible(`//div[@id="job-failure"][contains(., "not found on this node")]`),
		chromedp.WaitVisible(logsContain("executable file not found")),
		chromedp.WaitVisible(`//span[@id="logs-state"][.="complete"]`))
	if reason := b.text("#job-failure"); !strings.Contains(reason, failReason) || !strings.Contains(reason, "not retried") {
		t.Errorf("failure reason shown as %q", reason)
	}
	b.shot("03-failed-job")

	// The job's details and its logs arrive by separate requests: wait for
	// both (the name as text) before reading them.
	b.do("open the job whose output looks like HTML", openJob(f.xssJob), chromedp.WaitVisible(logsContain("onerror=alert(1)")),
		chromedp.WaitVisible(`//pre[contains(@class, "output")][contains(., "onerror")]`),
		chromedp.WaitVisible(`//*[@id="job-name"][.="`+xss+`"]`))
	if n := eval[int](b, `document.querySelectorAll('img[src="x"], [onerror]').length`); n != 0 {
		t.Errorf("task output created %d elements", n)
	}
	if name := b.text("#job-name"); name != xss {
		t.Errorf("job name shown as %q, want the text %q", name, xss)
	}
	b.shot("04-output-shown-as-text")

	b.do("open the running job", openJob(f.running), chromedp.WaitVisible(logsContain("step 1")),
		chromedp.WaitVisible(`//span[@id="logs-state"][.="following"]`))
	f.logMore(t, 2, "step 2 loss 1.87\n")
	b.do("see new output arrive", chromedp.WaitVisible(logsContain("step 2 loss 1.87")))
	// Its head comes by a request of its own: wait for it.
	b.do("the running job's command and run time", chromedp.WaitVisible(`//code[@id="job-command"][.="python finetune.py"]`),
		chromedp.WaitVisible(`//div[@id="job-head"]//dt[.="Running for"]`))
	b.shot("05-live-logs")

	b.do("open the pending job", openJob(f.pending), chromedp.WaitVisible(`//div[@id="job-head"]//span[.="pending"]`),
		chromedp.WaitVisible(`//div[@id="job-waiting"][contains(., "A100")]`),
		// The head is drawn by a request of its own: wait for its terms.
		chromedp.WaitVisible(`//span[@id="job-gpus"][contains(., "A100")]`))
	// A job that never ran shows no run time, only how long it waits,
	// and says what it asks for.
	if head := b.text("#job-head"); strings.Contains(head, "Ran for") || strings.Contains(head, "Running for") || !strings.Contains(head, "Waiting for") {
		t.Errorf("pending job's head says %q", head)
	}
	if gpus := b.text("#job-gpus"); gpus != "1 GPU per task, model A100" {
		t.Errorf("pending job's GPUs shown as %q", gpus)
	}
	if cmd := b.text("#job-command"); cmd != "true" {
		t.Errorf("pending job's command shown as %q", cmd)
	}
	b.shot("06-pending-job")

	b.do("workers with a read token", showView("workers"),
		chromedp.WaitVisible(`//section[@id="view-workers"]//p[contains(@class, "locked")][contains(., "admin token")]`))
	b.shot("07-workers-need-admin")
	b.do("audit with a read token", showView("audit"),
		chromedp.WaitVisible(`//section[@id="view-audit"]//p[contains(@class, "locked")][contains(., "admin token")]`))
	b.checkNoStorage(f.readToken)

	b.do("sign out on a job's page", openJob(f.running), chromedp.WaitVisible(logsContain("step 2")),
		chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")))
	if n := eval[int](b, `document.querySelectorAll("tr.job-row, .task, #logs span").length`); n != 0 {
		t.Errorf("%d elements of data remain after signing out", n)
	}
	b.do("sign in with the admin token, back on that page", chromedp.SendKeys(chromedp.ID("token"), f.h.AdminToken),
		chromedp.Click(chromedp.ID("signin-button")), chromedp.WaitVisible(logsContain("step 2")))
	b.do("audit with the admin token", showView("audit"),
		chromedp.WaitVisible(`//tr[contains(@class, "audit-row")][contains(., "token.created")]`),
		chromedp.WaitVisible(`//tr[contains(@class, "audit-row")][contains(., "worker.drained")]`))
	// The audit table fits its card: no column, Detail last, runs off it.
	if fits := eval[bool](b, `(() => { const t = document.querySelector("table.audit"), c = t.parentElement;
		const last = t.querySelector("th:last-child").getBoundingClientRect();
		return t.scrollWidth <= c.clientWidth + 1 && last.right <= c.getBoundingClientRect().right + 1; })()`); !fits {
		t.Errorf("the audit table is wider than its card: its Detail column is off-screen")
	}
	b.shot("08-audit")

	b.do("workers with the admin token", showView("workers"),
		chromedp.WaitVisible(`//div[@data-worker="gpu-node-1"]//td[contains(., "fallen off the bus")]`),
		chromedp.WaitVisible(`//div[@data-worker="gpu-node-1"]//span[.="recovering"]`),
		chromedp.WaitVisible(`//div[@data-worker="gpu-node-2"]//span[.="draining"]`))
	// gpu-node-2 drains: its two GPUs are offered no task, so they do not
	// read healthy (PROTOCOL.md, "Devices").
	if s := b.text("#workers-summary"); s != "3 workers, 1 ready · 8 GPUs: 2 healthy, 6 unhealthy, 0 awaiting approval" {
		t.Errorf("workers summary %q", s)
	}
	if rows := eval[int](b, `document.querySelectorAll("#gpu-fleet tr.fleet-gpu").length`); rows != 8 {
		t.Errorf("the GPU fleet table has %d rows, want 8", rows)
	}
	if n := eval[int](b, `document.querySelectorAll('#gpu-fleet a[href="#job/`+f.running+`"]').length`); n != 1 {
		t.Errorf("the GPU fleet table links the running job %d times, want once", n)
	}
	if gpus := eval[int](b, `document.querySelectorAll('[data-worker="gpu-node-1"] tr.gpu').length`); gpus != 4 {
		t.Errorf("gpu-node-1 shows %d GPUs, want 4", gpus)
	}
	b.shot("09-workers")

	b.do("cluster", showView("cluster"), chromedp.WaitVisible(`//div[@id="leader-card"]//strong`),
		chromedp.WaitVisible(`//div[@id="peers-card"]//span[.="leader"]`))
	b.shot("10-cluster")
	b.checkNoStorage(f.h.AdminToken)

	requests, problems := b.seen()
	api := 0
	for _, u := range requests {
		if !strings.HasPrefix(u, f.h.URL+"/") {
			t.Errorf("the page asked another origin: %s", u)
		}
		if strings.HasPrefix(u, f.h.URL+"/v1/") {
			api++
		}
	}
	if api == 0 {
		t.Errorf("no API request recorded among %d requests", len(requests))
	}
	for _, p := range problems {
		t.Errorf("in the page: %s", p)
	}
	t.Logf("%d requests, all to %s; dashboard test took %s", len(requests), f.h.URL, time.Since(start).Round(time.Millisecond))
}

// checkNoStorage fails the test if the token is anywhere but in the
// page's memory: storage, cookies, the URL, the form field or the DOM.
func (b *browser) checkNoStorage(token string) {
	b.t.Helper()
	if n := eval[int](b, "localStorage.length + sessionStorage.length"); n != 0 {
		b.t.Errorf("web storage holds %d items", n)
	}
	if c := eval[string](b, "document.cookie"); c != "" {
		b.t.Errorf("cookies set: %q", c)
	}
	if u := eval[string](b, "location.href"); strings.Contains(u, token) {
		b.t.Errorf("the URL holds the token")
	}
	if v := eval[string](b, `document.getElementById("token").value`); v != "" {
		b.t.Errorf("the token field still holds %d characters", len(v))
	}
	if strings.Contains(eval[string](b, "document.documentElement.outerHTML"), token) {
		b.t.Errorf("the token is in the page's DOM")
	}
}
