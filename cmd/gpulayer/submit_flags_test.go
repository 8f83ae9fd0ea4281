package main

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// devClient is an API client for the coordinator of startDev's env.
func devClient(t *testing.T, env []string) *client.Client {
	t.Helper()
	var cfg client.Config
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GPULAYER_ADDR":
			cfg.Addrs = []string{v}
		case "GPULAYER_TOKEN":
			cfg.Token = v
		}
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// execConfigOf decodes a job's exec config.
func execConfigOf(t *testing.T, j api.Job) api.ExecConfig {
	t.Helper()
	var c api.ExecConfig
	if err := json.Unmarshal(j.Config, &c); err != nil {
		t.Fatalf("job %s config %s: %v", j.ID, j.Config, err)
	}
	return c
}

// Each job field job submit sets reaches the stored job: the CLI submits,
// the test reads the job back through the API.
func TestSubmitFlagsReachTheJob(t *testing.T) {
	env := startDevWith(t, "--fake-gpus", "dgxh100")
	c := devClient(t, env)
	res := func(r api.Resources) *api.Resources { return &r }
	up, err := c.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: execJSON(api.ExecConfig{Command: "true"})})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		env   []string // extra variables for the CLI
		args  []string // between "job submit" and "-- true"
		want  func(*api.JobSpec)
		warns bool // a warning on stderr
	}{
		{name: "no resource flag", want: func(s *api.JobSpec) {}},
		{name: "zero gpus", args: []string{"--gpus", "0"}, want: func(s *api.JobSpec) {}},
		{name: "gpus", args: []string{"--gpus", "2"}, want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 2}) }},
		{name: "gpu model", args: []string{"--gpus", "1", "--gpu-model", "H100 80GB"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUModel: "H100 80GB"}) }},
		{name: "gpu memory in MiB", args: []string{"--gpus", "1", "--gpu-memory", "40960"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 40960}) }},
		{name: "gpu memory in GiB", args: []string{"--gpus", "1", "--gpu-memory", "40GiB"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 40960}) }},
		{name: "gpu memory in G", args: []string{"--gpus", "1", "--gpu-memory", "80G"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 81920}) }},
		{name: "gpu memory with MiB", args: []string{"--gpus", "1", "--gpu-memory", "24576MiB"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 24576}) }},
		{name: "gpu memory in lower-case T", args: []string{"--gpus", "1", "--gpu-memory", "1t"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 1 << 20}) }},
		{name: "task memory and cpus", args: []string{"--memory", "4G", "--cpus", "1.5"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{MemoryMiB: 4096, CPUs: 1.5}) }},
		{name: "task memory in MiB beside gpus", args: []string{"--gpus", "1", "--memory", "512"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, MemoryMiB: 512}) }},
		{name: "compute capability", args: []string{"--gpus", "1", "--compute-capability", "8.0"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, ComputeCapability: "8.0"}) }},
		{name: "compute capability as NVML writes it", args: []string{"--gpus", "1", "--compute-capability", "09.0"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 1, ComputeCapability: "9.0"}) }},
		{name: "gpu terms without --gpus", args: []string{"--gpu-model", "a100", "--gpu-memory", "40G", "--compute-capability", "8.0"}, warns: true,
			want: func(s *api.JobSpec) {
				s.Resources = res(api.Resources{GPUModel: "a100", GPUMemoryMiB: 40960, ComputeCapability: "8.0"})
			}},
		{name: "max per worker", args: []string{"--count", "3", "--max-per-worker", "1"},
			want: func(s *api.JobSpec) { s.Count, s.MaxPerWorker = 3, 1 }},
		{name: "exclusive", args: []string{"--exclusive"}, want: func(s *api.JobSpec) { s.ExclusiveWorker = true }},
		{name: "parallelism", args: []string{"--count", "3", "--parallelism", "2"},
			want: func(s *api.JobSpec) { p := 2; s.Count, s.Parallelism = 3, &p }},
		{name: "depends on", args: []string{"--depends-on", up.ID + ":finished"},
			want: func(s *api.JobSpec) { s.DependsOn = []api.Dependency{{Job: up.ID, Condition: api.DependFinished}} }},
		{name: "mig profile", args: []string{"--gpus", "2", "--mig-profile", "1g.10gb"},
			want: func(s *api.JobSpec) { s.Resources = res(api.Resources{GPUs: 2, MIGProfile: "1g.10gb"}) }},
		{name: "gpu share", args: []string{"--gpus", "1", "--gpu-memory", "20G", "--gpu-sharing", "enforced"},
			want: func(s *api.JobSpec) {
				s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 20480, GPUSharing: api.SharingEnforced})
			}},
		{name: "gang", args: []string{"--gang", "--count", "4"}, want: func(s *api.JobSpec) { s.Gang, s.Count = true, 4 }},
		{name: "preflight", args: []string{"--gang", "--count", "2", "--gpus", "8", "--preflight"}, want: func(s *api.JobSpec) {
			s.Gang, s.Count, s.Preflight, s.Resources = true, 2, true, res(api.Resources{GPUs: 8})
		}},
		{name: "env", args: []string{"--env", "SEED=7", "--env", "EMPTY=", "--env", "OPTS=a=b c", "--env", "PATH=/opt/bin:/usr/bin"},
			want: func(s *api.JobSpec) {
				s.Config = execJSON(api.ExecConfig{Command: "true", Env: map[string]string{"SEED": "7", "EMPTY": "", "OPTS": "a=b c", "PATH": "/opt/bin:/usr/bin"}})
			}},
		{name: "from the environment", env: []string{"GPULAYER_GPUS=1", "GPULAYER_GPU_MEMORY=80G", "GPULAYER_MAX_PER_WORKER=2", "GPULAYER_EXCLUSIVE=true", "GPULAYER_ENV=production"},
			want: func(s *api.JobSpec) {
				s.Resources = res(api.Resources{GPUs: 1, GPUMemoryMiB: 81920})
				s.MaxPerWorker, s.ExclusiveWorker = 2, true
			}},
		{name: "everything", args: []string{"--name", "all", "--count", "4", "--gpus", "2", "--gpu-model", "h100", "--gpu-memory", "80000",
			"--compute-capability", "9.0", "--max-per-worker", "2", "--exclusive", "--env", "A=1", "--priority", "5", "--timeout", "60",
			"--max-attempts", "2", "--lease", "20", "--capability", "train", "--spread", "--idempotency-key", "every-field-1"},
			want: func(s *api.JobSpec) {
				s.Name, s.Count, s.Priority, s.TimeoutSeconds, s.MaxAttempts, s.LeaseSeconds = "all", 4, 5, 60, 2, 20
				s.Resources = res(api.Resources{GPUs: 2, GPUModel: "h100", GPUMemoryMiB: 80000, ComputeCapability: "9.0"})
				s.MaxPerWorker, s.ExclusiveWorker, s.Capability, s.Spread, s.IdempotencyKey = 2, true, "train", true, "every-field-1"
				s.Config = execJSON(api.ExecConfig{Command: "true", Env: map[string]string{"A": "1"}})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"job", "submit"}, tc.args...), "--", "true")
			r := run(t, append(append([]string{}, env...), tc.env...), args...)
			if r.code != 0 {
				t.Fatalf("gpulayer %q: exit %d\n%s", args, r.code, r.stderr)
			}
			if warned := strings.Contains(r.stderr, "warning: "); warned != tc.warns {
				t.Errorf("stderr %q; want a warning: %v", r.stderr, tc.warns)
			}
			job, err := c.Job(t.Context(), strings.TrimSpace(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			want := api.JobSpec{Executor: "exec", Count: 1, Config: execJSON(api.ExecConfig{Command: "true"})}
			tc.want(&want)
			got := job.JobSpec
			if !reflect.DeepEqual(got.Resources, want.Resources) {
				t.Errorf("resources %+v, want %+v", got.Resources, want.Resources)
			}
			if gc, wc := execConfigOf(t, job), mustExecConfig(t, want.Config); !reflect.DeepEqual(gc, wc) {
				t.Errorf("config %+v, want %+v", gc, wc)
			}
			got.Resources, want.Resources, got.Config, want.Config = nil, nil, nil, nil
			// A submit without --idempotency-key gets a key of the
			// client's own (sdk/client SubmitJob).
			if want.IdempotencyKey == "" && strings.HasPrefix(got.IdempotencyKey, client.AutoIdempotencyPrefix) {
				got.IdempotencyKey = ""
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stored spec\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func execJSON(c api.ExecConfig) json.RawMessage {
	b, _ := json.Marshal(c)
	return b
}

func mustExecConfig(t *testing.T, raw json.RawMessage) api.ExecConfig {
	t.Helper()
	var c api.ExecConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// A value the coordinator would refuse, or one that cannot mean what was
// asked, is a usage error (exit 2, one line and the hint, nothing on
// stdout) and nothing is submitted.
func TestSubmitFlagsRefuseBadValues(t *testing.T) {
	env := startDev(t)
	c := devClient(t, env)
	before, err := c.Jobs(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	manyEnv := make([]string, 0, 2*(api.MaxEnv+1))
	for i := range api.MaxEnv + 1 {
		manyEnv = append(manyEnv, "--env", "V"+strings.Repeat("x", i)+"=1")
	}
	cases := []struct {
		name string
		env  []string
		args []string // between "job submit" and "-- true" (no "-- true" when config is in args)
		want string
	}{
		{"gpus below 0", nil, []string{"--gpus", "-1"}, "from 0 to 64"},
		{"gpus above the bound", nil, []string{"--gpus", "65"}, "from 0 to 64"},
		{"gpu memory not a number", nil, []string{"--gpus", "1", "--gpu-memory", "lots"}, "--gpu-memory \"lots\""},
		{"gpu memory fractional", nil, []string{"--gpus", "1", "--gpu-memory", "1.5G"}, "whole number"},
		{"gpu memory negative", nil, []string{"--gpus", "1", "--gpu-memory", "-1"}, "whole number"},
		{"gpu memory in GB", nil, []string{"--gpus", "1", "--gpu-memory", "80GB"}, "say GiB"},
		{"gpu memory in KiB", nil, []string{"--gpus", "1", "--gpu-memory", "40KiB"}, `unknown unit "KiB"`},
		{"gpu memory overflows", nil, []string{"--gpus", "1", "--gpu-memory", "99999999999999999999T"}, "too large"},
		{"task memory zero", nil, []string{"--memory", "0"}, "--memory \"0\": give from 1 MiB"},
		{"task memory past 16 TiB", nil, []string{"--memory", "17T"}, "16TiB"},
		{"task memory in GB", nil, []string{"--memory", "4GB"}, "say GiB"},
		{"cpus negative", nil, []string{"--cpus", "-1"}, "--cpus -1"},
		{"cpus past the bound", nil, []string{"--cpus", "5000"}, "at most 4096"},
		{"compute capability without minor", nil, []string{"--gpus", "1", "--compute-capability", "9"}, "give MAJOR.MINOR"},
		{"compute capability of three parts", nil, []string{"--gpus", "1", "--compute-capability", "9.0.1"}, "give MAJOR.MINOR"},
		{"compute capability named", nil, []string{"--gpus", "1", "--compute-capability", "sm_90"}, "give MAJOR.MINOR"},
		{"gpu model blank", nil, []string{"--gpus", "1", "--gpu-model", "  "}, "--gpu-model is blank"},
		{"gpu model too long", nil, []string{"--gpus", "1", "--gpu-model", strings.Repeat("h", api.MaxDeviceNameBytes+1)}, "at most 128"},
		{"max per worker negative", nil, []string{"--max-per-worker", "-1"}, "--max-per-worker -1"},
		{"parallelism over count", nil, []string{"--count", "2", "--parallelism", "3"}, "--parallelism 3: give 1 to --count (2)"},
		{"parallelism negative", nil, []string{"--parallelism", "-1"}, "--parallelism -1"},
		{"parallelism splitting a gang", nil, []string{"--gang", "--count", "4", "--parallelism", "2"}, "a gang runs whole"},
		{"depends on with a bad condition", nil, []string{"--depends-on", "j1:started"}, "succeeded, failed or finished"},
		{"depends on no job", nil, []string{"--depends-on", ":failed"}, "give a job id"},
		{"max per worker not a number", nil, []string{"--max-per-worker", "one"}, `invalid argument "one" for "--max-per-worker" flag`},
		{"env without =", nil, []string{"--env", "SEED"}, "give KEY=VALUE"},
		{"env name empty", nil, []string{"--env", "=1"}, "not a variable name"},
		{"env name with a dash", nil, []string{"--env", "MY-VAR=1"}, "not a variable name"},
		{"env name starting with a digit", nil, []string{"--env", "1X=1"}, "not a variable name"},
		{"env of the agent's task ids", nil, []string{"--env", "GPULAYER_TASK_ID=t"}, "GPULAYER_* variables are the agent's"},
		{"env of the agent's user switch", nil, []string{"--env", "GPULAYER_TASK_UID=0"}, "GPULAYER_* variables are the agent's"},
		{"env of any GPULAYER_ name", nil, []string{"--env", "GPULAYER_MINE=1"}, "GPULAYER_* variables are the agent's"},
		{"env of the task's GPUs", nil, []string{"--env", "CUDA_VISIBLE_DEVICES=0"}, "the agent sets it for every task"},
		{"env of the task's home", nil, []string{"--env", "HOME=/root"}, "the agent sets it for every task"},
		{"env given twice", nil, []string{"--env", "A=1", "--env", "A=2"}, "A given twice"},
		{"env value too long", nil, []string{"--env", "BIG=" + strings.Repeat("v", api.MaxEnvValueBytes+1)}, "at most 32768"},
		{"env too many", nil, manyEnv, "at most 256"},
		{"mig profile misspelt", nil, []string{"--gpus", "1", "--mig-profile", "1g10gb"}, "give a MIG profile"},
		{"mig profile without gpus", nil, []string{"--mig-profile", "1g.10gb"}, "--mig-profile needs --gpus"},
		{"gpu sharing unknown", nil, []string{"--gpus", "1", "--gpu-memory", "1G", "--gpu-sharing", "yes"}, `--gpu-sharing "yes": give enforced or unenforced`},
		{"gpu sharing without memory", nil, []string{"--gpus", "1", "--gpu-sharing", "unenforced"}, "--gpu-sharing needs --gpus 1 and --gpu-memory"},
		{"gpu sharing over two GPUs", nil, []string{"--gpus", "2", "--gpu-memory", "1G", "--gpu-sharing", "unenforced"}, "--gpu-sharing needs --gpus 1"},
		{"gpu sharing of MIG devices", nil, []string{"--gpus", "1", "--gpu-memory", "1G", "--mig-profile", "1g.10gb", "--gpu-sharing", "enforced"}, "not MIG devices"},
		{"gang of one", nil, []string{"--gang"}, "a gang needs --count of 2 or more"},
		{"env a gang's rank", nil, []string{"--gang", "--count", "2", "--env", "RANK=3"}, "the agent sets it for every task of a gang"},
		{"env a torchrun option in a gang", nil, []string{"--gang", "--count", "2", "--env", "PET_NNODES=9"}, "the agent sets it for every task of a gang"},
		{"env with --config", nil, []string{"--executor", "echo", "--config", `{"message":"hi"}`, "--env", "A=1"}, `put the variables in the config's "env"`},
		{"gpu memory from a bad variable", []string{"GPULAYER_GPU_MEMORY=huge"}, []string{"--gpus", "1"}, "--gpu-memory \"huge\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"job", "submit"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "--config") {
				args = append(args, "--", "true")
			}
			r := run(t, append(append([]string{}, env...), tc.env...), args...)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if r.code != exitUsage || r.stdout != "" || len(lines) != 2 || !strings.Contains(lines[0], tc.want) ||
				lines[1] != "Run 'gpulayer job submit --help' for usage." {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, exitUsage, tc.want)
			}
			if strings.Contains(r.stderr, "put the command after --") {
				t.Errorf("a bad value of gpulayer's own flag is taken for the command's flag: %q", r.stderr)
			}
		})
	}
	after, err := c.Jobs(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d jobs before the refused submits, %d after", len(before), len(after))
	}
}

// The flags place and run a job on the dev agent's fake H100s: its env
// reaches the command, its GPU terms match the GPU it got, and job status
// shows them.
func TestSubmitFlagsRunOnTheDevAgent(t *testing.T) {
	env := startDevWith(t, "--fake-gpus", "dgxh100")
	r := run(t, env, "job", "submit", "--gpus", "1", "--gpu-model", "h100", "--gpu-memory", "80G", "--compute-capability", "9.0",
		"--exclusive", "--max-per-worker", "1", "--env", "GREETING=hello there", "--env", "CUDA_HOME=/opt/cuda",
		"--wait", "--", "sh", "-c", `echo "$GREETING from $CUDA_HOME on $CUDA_VISIBLE_DEVICES"`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "hello there from /opt/cuda on GPU-") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	id := strings.TrimSpace(strings.Fields(r.stderr)[1])
	st := run(t, env, "job", "status", id)
	for _, want := range []string{`gpus=1  gpu_model="h100"  gpu_memory=81920MiB  compute_capability=9.0  max_per_worker=1  exclusive`, "succeeded"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("job status lacks %q:\n%s", want, st.stdout)
		}
	}
	got := devClient(t, env)
	job, err := got.Job(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if e := execConfigOf(t, job).Env; !maps.Equal(e, map[string]string{"GREETING": "hello there", "CUDA_HOME": "/opt/cuda"}) {
		t.Fatalf("stored env %v", e)
	}
}
