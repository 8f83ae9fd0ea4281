package executor

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

func TestPluginLogHandlerSpeaksHclogJSON(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewPluginLogHandler(&buf, slog.LevelDebug-4))
	for _, tc := range []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelDebug - 4, "trace"},
		{slog.LevelDebug, "debug"},
		{slog.LevelInfo, "info"},
		{slog.LevelWarn, "warn"},
		{slog.LevelError, "error"},
	} {
		buf.Reset()
		log.Log(t.Context(), tc.level, "task started", "task_id", "t1", slog.Group("g", "k", 1))
		var got map[string]any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("not JSON: %q: %v", buf.String(), err)
		}
		if got["@level"] != tc.want || got["@message"] != "task started" || got["task_id"] != "t1" {
			t.Errorf("level %v: got %v", tc.level, got)
		}
		ts, _ := got["@timestamp"].(string)
		if _, err := time.Parse(hclogTimeFormat, ts); err != nil {
			t.Errorf("@timestamp %q not in go-plugin's layout: %v", ts, err)
		}
		if g, _ := got["g"].(map[string]any); g["k"] != 1.0 {
			t.Errorf("group attrs lost: %v", got)
		}
	}
}
