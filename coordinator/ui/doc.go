// Package ui holds the web dashboard that every coordinator serves at /ui:
// a read-only view of the cluster, jobs with their tasks, reasons and live
// logs, workers with their GPUs, the audit log, and the API description
// (GET /v1/openapi.json, which needs no token, so its view opens without
// signing in).
//
// The assets are plain HTML, CSS and JavaScript modules embedded in the
// binary; nothing is built or downloaded. They hold no data: the page asks
// for a client token, keeps it in memory, and reads everything through
// the HTTP API with it, so the files are served without a credential under
// a strict Content-Security-Policy (see Serve). docs/dashboard.md
// describes the dashboard and its security choices.
package ui
