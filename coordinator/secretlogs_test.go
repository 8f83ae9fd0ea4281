package coordinator_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// TestLogsNeverContainSecrets runs the whole security scenario on a
// three-node cluster (so requests are forwarded between coordinators),
// logging at debug level into a buffer, and scans every line for every
// token minted during the run: init's, created, one-time, instance,
// worker, reissued and rotated. Misused tokens were also put in bodies,
// query strings and other headers.
func TestLogsNeverContainSecrets(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Logger: logger, Tweak: func(cfg *coordinator.Config) {
		behindLoopbackProxy(cfg)
		cfg.AuditFlush = 50 * time.Millisecond
	}})
	var dirs []string
	for _, n := range c.Nodes {
		dirs = append(dirs, n.DataDir)
	}
	sc := &securityScenario{t: t, admin: c.Client(c.AdminToken), urls: c.URLs(), dataDirs: dirs}
	sc.run(c.AdminToken, c.JoinToken)
	c.Converged(10 * time.Second)
	for _, n := range c.Nodes {
		c.Stop(n)
	}
	out := logs.Bytes()
	if !bytes.Contains(out, []byte("msg=request")) || !bytes.Contains(out, []byte("request refused")) || !bytes.Contains(out, []byte("token created")) {
		t.Fatalf("the log did not capture the run (%d bytes)", len(out))
	}
	if len(sc.tokens) < 12 {
		t.Fatalf("the scenario minted only %d tokens", len(sc.tokens))
	}
	if leaked := secretsIn(out, sc.tokens); len(leaked) > 0 {
		t.Fatalf("the logs hold the secrets of %d tokens: %v", len(leaked), leaked)
	}
	t.Logf("%d tokens checked against %d bytes of debug log", len(sc.tokens), len(out))
}
