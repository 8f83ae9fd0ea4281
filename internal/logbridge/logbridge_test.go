package logbridge

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestBridgeLevelsAndArgs(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := New(l, "raft", hclog.Info).Named("fsm").With("node", "n1")
	h.Debug("hidden")
	h.Info("shown", "k", 1)
	h.Error("bad")
	out := buf.String()
	if strings.Contains(out, "hidden") {
		t.Fatalf("debug line passed an info-level bridge: %s", out)
	}
	for _, want := range []string{"msg=shown", "k=1", "subsystem=raft.fsm", "node=n1", "level=ERROR"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !h.IsWarn() || h.IsDebug() {
		t.Error("level predicates wrong")
	}
	h.StandardLogger(nil).Print("std line")
	if !strings.Contains(buf.String(), "std line") {
		t.Error("standard logger did not reach slog")
	}
}
