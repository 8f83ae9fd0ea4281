// Package uitest tests the web dashboard (package ui) as a user meets it:
// its routes on a real coordinator over HTTP, and the page itself in
// headless Chromium driven through the DevTools protocol (chromedp),
// which takes screenshots as it goes.
//
// The browser test skips when no Chromium is installed, unless
// GPULAYER_UI_TEST=1 asks for it (make test-ui sets it after
// scripts/ensure-chromium.sh installed one); GPULAYER_CHROMIUM names the
// binary, UI_SHOTS_DIR where the screenshots go.
package uitest
