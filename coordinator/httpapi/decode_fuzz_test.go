package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// requestBodies lists every type a handler decodes a request body into
// with decodeRequest, or validate.go with decodeStrict, and whether that
// call accepts an empty body.
var requestBodies = []struct {
	name       string
	into       func() any
	allowEmpty bool
}{
	{"ClusterRequest", func() any { return &api.ClusterRequest{} }, false},
	{"EnrollmentRequest", func() any { return &api.EnrollmentRequest{} }, false},
	{"EnrollRequest", func() any { return &api.EnrollRequest{} }, false},
	{"CreateGroupRequest", func() any { return &api.CreateGroupRequest{} }, false},
	{"GroupMember", func() any { return &api.GroupMember{} }, false},
	{"JobSpec", func() any { return &api.JobSpec{} }, false},
	{"ExecConfig", func() any { return &api.ExecConfig{} }, false},
	{"empty object", func() any { return &struct{}{} }, true},
	{"RaftPeerRequest", func() any { return &api.RaftPeerRequest{} }, false},
	{"StartRequest", func() any { return &api.StartRequest{} }, false},
	{"LogsRequest", func() any { return &api.LogsRequest{} }, false},
	{"FinishRequest", func() any { return &api.FinishRequest{} }, false},
	{"FailRequest", func() any { return &api.FailRequest{} }, false},
	{"CreateTokenRequest", func() any { return &api.CreateTokenRequest{} }, false},
	{"CreateInstanceTokenRequest", func() any { return &api.CreateInstanceTokenRequest{} }, false},
	{"RegisterRequest", func() any { return &api.RegisterRequest{} }, true},
	{"HeartbeatRequest", func() any { return &api.HeartbeatRequest{} }, true},
	{"AcquireRequest", func() any { return &api.AcquireRequest{} }, true},
}

// fuzzBodySeeds are request bodies for the decoder fuzz targets: one well
// formed body per request type, and the shapes decode_test.go shows
// decodeStrict refusing.
var fuzzBodySeeds = []string{
	``,
	`{}`,
	`null`,
	`{"cluster_key":"lab","allowed_source_cidrs":["10.0.0.0/8"]}`,
	`{"cluster_key":"lab","external_worker_key":"vm-1","public_ip":"10.0.0.9"}`,
	`{"cluster_key":"lab","external_worker_key":"vm-1","worker_id":"w1","labels":{"zone":"a"},"devices":[{"uuid":"GPU-1","healthy":true}]}`,
	`{"group_id":"pool","members":[{"kind":"worker","id":"w1"},{"kind":"group","id":"sub"}]}`,
	`{"kind":"worker","id":"w1"}`,
	`{"name":"n","executor":"exec","config":{"command":"true","args":["-c"],"env":{"A":"b"},"dir":"sub/dir"},"count":2,` +
		`"resources":{"gpus":1,"gpu_memory_mib":81559,"gpu_model":"H100","compute_capability":"9.0"},"capability":"infer",` +
		`"target":{"kind":"group","id":"pool"},"affinity":[{"label":"zone","value":"a","weight":20},{"group":"pool","required":true}],"spread":true,"exclusive_worker":true,"max_per_worker":1,"priority":-3,` +
		`"max_attempts":2,"lease_seconds":30,"timeout_seconds":60,` +
		`"inputs":["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],"idempotency_key":"k"}`,
	`{"command":"true","dir":"../x"}`,
	`{"node_id":"n2","raft_addr":"127.0.0.1:7001"}`,
	`{"attempt_id":"a1"}`,
	`{"attempt_id":"a1","stream":"stdout","seq":1,"data":"hi\n"}`,
	`{"attempt_id":"a0123456789abcdef","submission_id":"s0123456789","exit_code":0,"output":{"loss":0.25,"steps":[1,2,3]},` +
		`"artifacts":["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]}`,
	`{"attempt_id":"a1","reason":"executor missing"}`,
	`{"kind":"join","name":"fleet","roles":["read"],"expires_in_seconds":3600,"max_uses":1,"requires_approval":true,"groups":["pool"],"labels":{"zone":"a"}}`,
	`{"instance_id":"i-1","name":"n","expires_in_seconds":60}`,
	`{"running_task_ids":["t1"],"devices":[{"index":0,"uuid":"GPU-1","name":"H100","memory_mib":81559,"healthy":true}],"executors":["exec"]}`,
	`{"capability":"infer","max_lease_seconds":30,"wait_seconds":20}`,
	`{"executor":"exec","executor":"evil"}`,
	`{"EXECUTOR":"exec"}`,
	"{\"executor\":\"x\",\"name\":\"a\xffb\"}",
	`{"executor":"x","name":"\ud800"}`,
	`{"executor":"x","resources":{"gpus":99999999999999999999}}`,
	`{"executor":"x","resources":{"gpus":1.5}}`,
	`{"executor":"x"} {}`,
	`{"executor":"x"`,
	`[1]`,
}

// FuzzDecodeStrict decodes arbitrary bytes into every request body type,
// as handlers do. decodeStrict must never panic, and must refuse a body
// only with an *apiError carrying api.CodeInvalidArgument. A body it
// accepts must mean the same to encoding/json, the decoder clients and
// the rest of the coordinator use; and the value, marshalled with
// encoding/json as the SDK client sends it, must decode strictly again
// and marshal to the same bytes.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range fuzzBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rb := range requestBodies {
			v := rb.into()
			if err := decodeStrict(body, v, rb.allowEmpty); err != nil {
				var ae *apiError
				if !errors.As(err, &ae) || ae.code != api.CodeInvalidArgument {
					t.Fatalf("%s: refusal %v (%T) is not invalid_argument", rb.name, err, err)
				}
				continue
			}
			if len(bytes.TrimSpace(body)) > 0 {
				lax := rb.into()
				if err := json.Unmarshal(body, lax); err != nil {
					t.Fatalf("%s: decodeStrict accepts a body encoding/json refuses: %v\nbody %q", rb.name, err, body)
				}
				if !reflect.DeepEqual(v, lax) {
					t.Fatalf("%s: decodeStrict and encoding/json read the body differently:\nstrict %#v\nlax    %#v\nbody %q", rb.name, v, lax, body)
				}
			}
			first, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: accepted value does not marshal: %v", rb.name, err)
			}
			again := rb.into()
			if err := decodeStrict(first, again, false); err != nil {
				t.Fatalf("%s: refuses its own marshalled form: %v\nbody %q\nmarshalled %q", rb.name, err, body, first)
			}
			second, err := json.Marshal(again)
			if err != nil {
				t.Fatalf("%s: re-decoded value does not marshal: %v", rb.name, err)
			}
			if !bytes.Equal(first, second) {
				t.Fatalf("%s: marshal, decode, marshal changed the bytes:\nfirst  %q\nsecond %q", rb.name, first, second)
			}
		}
	})
}

// FuzzValidateJobSpec runs the checks submitJob makes on a decoded job
// spec. validateJobSpec must never panic and must refuse only with an
// *apiError (invalid_argument, or reserved_identifier for a target id).
// A spec it accepts must hold what the checks promise: a valid executor
// name, a usable exec config, and inputs that are all digests.
func FuzzValidateJobSpec(f *testing.F) {
	for _, s := range fuzzBodySeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"executor":"exec","config":{"command":"true","dir":"a/../../b"}}`))
	f.Add([]byte(`{"executor":"exec","config":{"command":"","env":{"":"x"}}}`))
	f.Add([]byte(`{"executor":"exec","config":"string"}`))
	f.Add([]byte(`{"executor":"x","config":null,"target":{"kind":"worker","id":"self"}}`))
	f.Add([]byte(`{"executor":"x","inputs":["E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var spec api.JobSpec
		if err := decodeStrict(body, &spec, false); err != nil {
			return
		}
		err := validateJobSpec(&spec)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || (ae.code != api.CodeInvalidArgument && ae.code != api.CodeReservedIdentifier) {
				t.Fatalf("refusal %v (%T) is not invalid_argument or reserved_identifier", err, err)
			}
			return
		}
		if !executorPattern.MatchString(spec.Executor) {
			t.Fatalf("accepted executor %q", spec.Executor)
		}
		if _, err := api.ParseAffinity(spec.Affinity); err != nil {
			t.Fatalf("accepted affinity %s: %v", spec.Affinity, err)
		}
		for _, in := range spec.Inputs {
			if !api.ValidDigest(in.SHA256) || api.CheckArtifactPath(in.StagePath()) != nil {
				t.Fatalf("accepted input %+v", in)
			}
		}
		for _, g := range spec.Outputs {
			if api.CheckOutputGlob(g) != nil {
				t.Fatalf("accepted output %q", g)
			}
		}
		if spec.Executor == "exec" {
			var c api.ExecConfig
			if err := json.Unmarshal(spec.Config, &c); err != nil {
				t.Fatalf("accepted exec config that encoding/json refuses: %v", err)
			}
			if c.Command == "" || api.CheckExecDir(c.Dir) != nil {
				t.Fatalf("accepted exec config %+v", c)
			}
		}
	})
}
