package integration

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// submitClient creates a submit-role client token and returns a client
// holding it: the attacker of these tests.
func submitClient(t *testing.T, h interface {
	Client(testing.TB, string) *client.Client
}, admin *client.Client) *client.Client {
	t.Helper()
	tok, err := admin.CreateToken(t.Context(), api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "submitter", Roles: []string{api.RoleSubmit}})
	if err != nil {
		t.Fatal(err)
	}
	return h.Client(t, tok.Token)
}

// The attack (finding 2): a submit-role job running `env` printed the
// agent's GPULAYER_ADMIN_TOKEN and GPULAYER_JOIN_TOKEN, escalating submit
// to admin. With the tokens in the agent's environment, a task sees
// neither, nor any variable outside the allowlist.
func TestTaskSeesNoAgentSecrets(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	t.Setenv("GPULAYER_ADMIN_TOKEN", h.AdminToken)
	t.Setenv("GPULAYER_JOIN_TOKEN", h.JoinToken)
	t.Setenv("GL_AGENT_CANARY", "canary-value")
	startAgent(t, h.URL, h.JoinToken, "node-env", "")
	sub := submitClient(t, h, admin)
	job, err := sub.SubmitJob(t.Context(), execSpec(`env; tr '\0' '\n' < /proc/self/environ`, 0))
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, job.ID, terminal, "the env job to end")
	if j.State != api.TaskSucceeded {
		t.Fatalf("job %s", j.State)
	}
	out := logsOf(t, admin, job.ID)
	for _, secret := range []string{h.AdminToken, h.JoinToken, "canary-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("the task saw %.12s… in its environment", secret)
		}
	}
	allowed := []string{"PATH", "LANG", "TZ", "HOME", "TMPDIR", "USER", "LOGNAME",
		"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "GPULAYER_TASK_ID", "GPULAYER_JOB_ID", "GPULAYER_TASK_INDEX", "GPULAYER_TASK_COUNT", "GPULAYER_ATTEMPT_ID",
		"GPULAYER_TASK_UID", "GPULAYER_TASK_GID", "PWD", "SHLVL", "_"}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, _, ok := strings.Cut(line, "=")
		if ok && !slices.Contains(allowed, name) && !strings.HasPrefix(name, "LC_") {
			t.Errorf("task saw %s, which is not on the allowlist", name)
		}
	}
}

// The attack (finding 3): a job read the agent's worker credential from
// its working directory. The agent runs tasks as a uid of their own, so
// reading the credential (0600 in the 0700 data dir) is refused.
func TestTaskCannotReadWorkerCredential(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("tasks run as other uids only under a root agent; CI runs this as root")
	}
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ra := startAgent(t, h.URL, h.JoinToken, "node-cred", "")
	cred := agent.CredentialPath(ra.dataDir)
	sub := submitClient(t, h, admin)
	job, err := sub.SubmitJob(t.Context(), execSpec(`id -u; cat `+cred, 0))
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, job.ID, terminal, "the cat job to end")
	out := logsOf(t, admin, job.ID)
	if j.State != api.TaskFailed || !strings.Contains(out, "Permission denied") || strings.Contains(out, "glw_") {
		t.Fatalf("job %s, output %q: want the read refused", j.State, out)
	}
	if uid := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]); uid == "0" {
		t.Errorf("task ran as root")
	}
	fi, err := os.Stat(ra.dataDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}

// The attack (finding 3): config.dir "/" and "../../" ran a task outside
// its directory. Each is refused at submit with invalid_argument, and no
// job is created.
func TestConfigDirOutsideRefusedAtSubmit(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	sub := submitClient(t, h, admin)
	ctx := context.Background()
	before, err := admin.Jobs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/", "/etc", "../../", "..", "a/../../b"} {
		spec := api.JobSpec{Executor: "exec", Config: []byte(`{"command":"pwd","dir":` + quote(dir) + `}`)}
		_, err := sub.SubmitJob(ctx, spec)
		if !client.IsCode(err, api.CodeInvalidArgument) || !strings.Contains(err.Error(), "config.dir") {
			t.Errorf("dir %q: %v, want invalid_argument naming config.dir", dir, err)
		}
	}
	after, err := admin.Jobs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("refused submits created jobs: %d before, %d after", len(before), len(after))
	}
	// A dir inside the task directory is still accepted.
	if _, err := sub.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"pwd","dir":"a/../b"}`)}); err != nil {
		t.Errorf("dir a/../b refused: %v", err)
	}
}
