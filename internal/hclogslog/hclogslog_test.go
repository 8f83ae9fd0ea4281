package hclogslog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func newJSON(level slog.Level) (*bytes.Buffer, *Logger) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})
	return &buf, New(slog.New(h))
}

func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad record %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestLevelsAndAttrs(t *testing.T) {
	buf, l := newJSON(LevelTrace)
	var hl hclog.Logger = l
	hl = hl.Named("plugin").Named("exec").With("plugin_pid", 42)
	hl.Trace("t")
	hl.Debug("d")
	hl.Info("i", "k", "v")
	hl.Warn("w")
	hl.Error("e", "dangling")
	recs := records(t, buf)
	wantLevels := []string{"DEBUG-4", "DEBUG", "INFO", "WARN", "ERROR"}
	if len(recs) != len(wantLevels) {
		t.Fatalf("got %d records: %v", len(recs), recs)
	}
	for i, r := range recs {
		if r["level"] != wantLevels[i] || r["logger"] != "plugin.exec" || r["plugin_pid"] != 42.0 {
			t.Errorf("record %d = %v", i, r)
		}
	}
	if recs[2]["k"] != "v" {
		t.Errorf("args lost: %v", recs[2])
	}
	if recs[4]["EXTRA_VALUE_AT_END"] != "dangling" {
		t.Errorf("dangling value lost: %v", recs[4])
	}
	if got := hl.ImpliedArgs(); len(got) != 2 || got[0] != "plugin_pid" {
		t.Errorf("ImpliedArgs = %v", got)
	}
	if hl.Name() != "plugin.exec" || hl.ResetNamed("x").Name() != "x" {
		t.Errorf("names: %q", hl.Name())
	}
}

func TestLevelFollowsHandler(t *testing.T) {
	buf, l := newJSON(slog.LevelInfo)
	if l.IsDebug() || !l.IsInfo() || l.GetLevel() != hclog.Info {
		t.Fatalf("IsDebug=%v IsInfo=%v GetLevel=%v", l.IsDebug(), l.IsInfo(), l.GetLevel())
	}
	l.Debug("dropped")
	l.SetLevel(hclog.Error)
	l.Warn("dropped too")
	l.Error("kept")
	if recs := records(t, buf); len(recs) != 1 || recs[0]["msg"] != "kept" {
		t.Fatalf("records %v", recs)
	}
	l.SetLevel(hclog.Off)
	if l.GetLevel() != hclog.Off {
		t.Errorf("GetLevel after Off = %v", l.GetLevel())
	}
}

func TestStandardWriter(t *testing.T) {
	buf, l := newJSON(LevelTrace)
	w := l.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	_, _ = w.Write([]byte("[WARN] disk almost full\npart"))
	_, _ = w.Write([]byte("ial line\n"))
	recs := records(t, buf)
	if len(recs) != 2 {
		t.Fatalf("records %v", recs)
	}
	if recs[0]["level"] != "WARN" || recs[0]["msg"] != "disk almost full" {
		t.Errorf("inferred record %v", recs[0])
	}
	if recs[1]["level"] != "INFO" || recs[1]["msg"] != "partial line" {
		t.Errorf("joined record %v", recs[1])
	}
	l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error}).Print("forced")
	if recs := records(t, buf); recs[len(recs)-1]["level"] != "ERROR" {
		t.Errorf("ForceLevel ignored: %v", recs[len(recs)-1])
	}
}
