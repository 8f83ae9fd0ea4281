package agent

import (
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// An agent's sandbox owner is the same across its restarts (its data
// dir, however written) and differs between two agents of one host (two
// data dirs); it is one the executor accepts.
func TestSandboxOwner(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	same := sandboxOwner(a)
	if again := sandboxOwner(a + "/./"); again != same {
		t.Errorf("the same data dir: %q then %q", same, again)
	}
	if other := sandboxOwner(b); other == same {
		t.Errorf("two data dirs share the owner %q", same)
	}
	sb := executor.Sandbox{Owner: same}
	got, _, err := executor.TaskSandbox(executor.Task{Env: map[string]string{executor.EnvSandbox: sb.Encode()}})
	if err != nil || got.Owner != same {
		t.Errorf("the executor reads owner %q as %q, %v", same, got.Owner, err)
	}
	if cfg := (&Agent{cfg: Config{DataDir: a}}).taskSandbox(); cfg.Owner != same {
		t.Errorf("the runner is asked for owner %q, want %q", cfg.Owner, same)
	}
}
