package httpapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A container job's config is refused at submit, with invalid_argument and
// what is wrong, for every unusable shape; usable ones pass.
func TestValidateContainerConfig(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	other := strings.Repeat("cd", 32)
	cases := []struct {
		name   string
		config string
		inputs []api.ArtifactRef
		want   string // "" accepts
	}{
		{"image", `{"image":"train:1","args":["--epochs","1"]}`, nil, ""},
		{"everything", `{"image":"reg.local/x/train:1","command":["/bin/train"],"args":["a"],"env":{"A":"1"},"workdir":"out","read_only_root":true}`, nil, ""},
		{"absolute workdir is the image's", `{"image":"x","workdir":"/app"}`, nil, ""},
		{"artifact", `{"image_artifact":"` + digest + `"}`, []api.ArtifactRef{{SHA256: digest}}, ""},
		{"artifact with prefix", `{"image":"x:1","image_artifact":"sha256:` + digest + `"}`, []api.ArtifactRef{{SHA256: digest}}, ""},
		{"empty", ``, nil, "config for the container executor"},
		{"no image", `{"args":["x"]}`, nil, `"image" or "image_artifact" is required`},
		{"unknown field", `{"image":"x","privileged":true}`, nil, `unknown field "privileged"`},
		{"command a string", `{"image":"x","command":"sh -c id"}`, nil, "/command"},
		{"image option injection", `{"image":"--privileged"}`, nil, "not an image reference"},
		{"image with space", `{"image":"a b"}`, nil, "not an image reference"},
		{"image too long", `{"image":"` + strings.Repeat("a", api.MaxImageRefBytes+1) + `"}`, nil, "config.image"},
		{"bad artifact", `{"image_artifact":"abc"}`, nil, "not a SHA-256 digest"},
		{"artifact not an input", `{"image_artifact":"` + digest + `"}`, []api.ArtifactRef{{SHA256: other}}, "not among the job's inputs"},
		{"artifact staged elsewhere", `{"image_artifact":"` + digest + `"}`, []api.ArtifactRef{{SHA256: digest, Path: "img.tar"}}, "not among the job's inputs"},
		{"workdir climbs out", `{"image":"x","workdir":"../.."}`, nil, "workdir"},
		{"bad env name", `{"image":"x","env":{"A=B":"1"}}`, nil, "bad environment variable"},
		{"NUL in args", `{"image":"x","args":["a\u0000b"]}`, nil, "NUL"},
		{"empty command", `{"image":"x","command":[""]}`, nil, "command[0] is empty"},
		{"too many args", `{"image":"x","args":` + manyArgs(api.MaxArgs+1) + `}`, nil, "config.args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &api.JobSpec{Executor: api.ContainerExecutor, Config: json.RawMessage(c.config), Inputs: c.inputs}
			err := validateContainerConfig(s)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ae *apiError
			if !errors.As(err, &ae) || ae.code != api.CodeInvalidArgument {
				t.Fatalf("got %v, want invalid_argument", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("message %q does not say %q", err.Error(), c.want)
			}
		})
	}
}

func manyArgs(n int) string {
	b, _ := json.Marshal(make([]string, n))
	return string(b)
}
