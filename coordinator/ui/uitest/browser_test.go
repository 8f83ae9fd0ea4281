package uitest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Environment of the browser test.
const (
	// requireEnv=1 makes a missing browser a failure instead of a skip.
	requireEnv = "GPULAYER_UI_TEST"
	browserEnv = "GPULAYER_CHROMIUM"
	shotsEnv   = "UI_SHOTS_DIR"
)

// stepTimeout bounds each step of a browser test.
const stepTimeout = 20 * time.Second

// browserPath finds Chromium: GPULAYER_CHROMIUM, else the usual names
// on PATH. Without one the test skips, or fails under GPULAYER_UI_TEST=1.
func browserPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(browserEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (chromium, chromium-browser or google-chrome on PATH, or " + browserEnv + "); make test-ui installs one"
	if os.Getenv(requireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium tab pointed at a coordinator. It
// records every request the page makes and every console error, CSP
// violation and dialog, for the test to check at the end.
type browser struct {
	t      *testing.T
	ctx    context.Context
	origin string
	shots  string

	mu       sync.Mutex
	requests []string
	problems []string
}

func newBrowser(t *testing.T, origin string) *browser {
	t.Helper()
	path := browserPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// Only here: CI runs the test as root, where Chromium refuses to
		// start with its sandbox.
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(1366, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	b := &browser{t: t, ctx: ctx, origin: origin, shots: shotsDir(t)}
	b.record()
	t.Logf("browser %s; screenshots in %s", path, b.shots)
	return b
}

func shotsDir(t *testing.T) string {
	dir := os.Getenv(shotsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "gpulayer-ui-shots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// record subscribes to requests, console messages and dialogs. A dialog
// is dismissed at once (an alert would block the page) and noted.
func (b *browser) record() {
	requests := chromedp.Events(b.ctx, network.RequestWillBeSent)
	console := chromedp.Console(b.ctx)
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.note(&b.requests, ev.Request.URL)
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			// A refused API call (403 for an admin panel) is logged by
			// the browser as a failed resource; that is expected.
			if (m.Type == chromedp.ConsoleException || m.Type == "error") && !strings.HasPrefix(m.Text, "Failed to load resource") {
				b.note(&b.problems, "console: "+m.Text)
			}
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.note(&b.problems, "dialog opened: "+ev.Message)
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
}

func (b *browser) note(list *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*list = append(*list, s)
}

// do runs actions within stepTimeout, failing the test with what.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text reads the text of the first element a selector finds.
func (b *browser) text(sel chromedp.CSS) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// shot saves a full-page PNG screenshot as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// seen returns the requests and problems recorded so far.
func (b *browser) seen() (requests, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...), append([]string(nil), b.problems...)
}
