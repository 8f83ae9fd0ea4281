package httpapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Each body is one that encoding/json (v1) accepts; decodeStrict must
// refuse it with invalid_argument and say what was wrong, and where.
func TestDecodeStrictRefusesWhatEncodingJSONAccepts(t *testing.T) {
	cases := []struct {
		name, body, want string
		into             func() any
	}{
		{"duplicate top-level key", `{"executor":"exec","executor":"evil"}`, `key "executor" appears twice`, spec},
		{"duplicate key in a nested struct", `{"executor":"x","resources":{"gpus":1,"gpus":2}}`, `/resources: key "gpus" appears twice`, spec},
		{"duplicate key inside raw config", `{"executor":"x","config":{"a":1,"b":{"c":1,"c":2}}}`, `/config/b: key "c" appears twice`, spec},
		{"duplicate map key", `{"labels":{"zone":"a","zone":"b"}}`, `/labels: key "zone" appears twice`, register},
		{"duplicate key in a list element", `{"devices":[{"uuid":"a","uuid":"b"}]}`, `/devices/0: key "uuid" appears twice`, register},
		{"duplicate key spelled with an escape", `{"executor":"x","\u0065xecutor":"y"}`, `appears twice`, spec},
		{"case-variant key", `{"EXECUTOR":"exec"}`, `unknown field "EXECUTOR"`, spec},
		{"case-variant nested key", `{"executor":"x","target":{"Kind":"worker","id":"w"}}`, `/target: unknown field "Kind"`, spec},
		{"case-variant key in exec config", `{"Command":"true"}`, `unknown field "Command"`, execConfig},
		{"invalid UTF-8 in a value", "{\"executor\":\"x\",\"name\":\"a\xffb\"}", `invalid UTF-8`, spec},
		{"invalid UTF-8 in a key", "{\"labels\":{\"\xc3\":\"v\"}}", `invalid UTF-8`, register},
		{"UTF-8-encoded surrogate", "{\"executor\":\"x\",\"name\":\"\xed\xa0\x80\"}", `invalid UTF-8`, spec},
		{"lone high surrogate", `{"executor":"x","name":"\ud800"}`, `lone surrogate`, spec},
		{"high surrogate then a letter", `{"executor":"x","name":"\ud800\u0041"}`, `lone surrogate`, spec},
		{"lone low surrogate", `{"executor":"x","name":"\udc00"}`, `lone surrogate`, spec},
		{"lone surrogate in raw config", `{"executor":"x","config":{"k":["\udfff"]}}`, `lone surrogate`, spec},
		{"wrong type", `{"executor":"x","resources":{"gpus":"2"}}`, `/resources/gpus: must be an integer, not a string`, spec},
		{"fraction for an integer", `{"executor":"x","resources":{"gpus":1.5}}`, `/resources/gpus: must be an integer, not a number`, spec},
		{"integer out of range", `{"executor":"x","resources":{"gpus":99999999999999999999}}`, `/resources/gpus: number out of range`, spec},
		{"array for an object", `[1]`, `must be an object, not an array`, spec},
		{"trailing data", `{"executor":"x"} {}`, `after top-level value`, spec},
		{"truncated", `{"executor":"x"`, `ends before the object does`, spec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := decodeStrict([]byte(c.body), c.into(), false)
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

// Well-formed bodies, including the escapes and characters that must be
// told apart from the refused ones, still decode.
func TestDecodeStrictAcceptsWellFormedBodies(t *testing.T) {
	cases := []struct {
		name, body string
		into       func() any
	}{
		{"surrogate pair", `{"executor":"x","name":"\ud83d\ude00"}`, spec},
		{"multibyte UTF-8", `{"executor":"x","name":"héllo 世界 😀"}`, spec},
		{"same key in sibling objects", `{"executor":"x","resources":{"gpus":1},"target":{"kind":"worker","id":"w"},"config":{"kind":1}}`, spec},
		{"same key at two depths", `{"executor":"x","config":{"executor":{"executor":1}}}`, spec},
		{"many distinct keys", bigLabels(200), register},
		{"escapes", `{"executor":"x","name":"a\"b\\c\/d\n\t\u00e9"}`, spec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := decodeStrict([]byte(c.body), c.into(), false); err != nil {
				t.Fatalf("refused a good body: %v", err)
			}
		})
	}
	if err := decodeStrict([]byte(bigLabels(200)[:len(bigLabels(200))-2]+`,"k0":"again"}}`), register(), false); err == nil || !strings.Contains(err.Error(), `key "k0" appears twice`) {
		t.Fatalf("a duplicate among many keys: got %v", err)
	}
}

func spec() any       { return &api.JobSpec{} }
func register() any   { return &api.RegisterRequest{} }
func execConfig() any { return &api.ExecConfig{} }

func bigLabels(n int) string {
	var b strings.Builder
	b.WriteString(`{"labels":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i%3) + strconv.Itoa(i) + `":"v"`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// BenchmarkDecodeStrictFinish measures the strict decode of S1's finish
// body, the hottest JSON path.
func BenchmarkDecodeStrictFinish(b *testing.B) {
	body := []byte(`{"attempt_id":"a0123456789abcdef","submission_id":"s0123456789","exit_code":0,"output":{"loss":0.25,"steps":[1,2,3]}}`)
	b.ReportAllocs()
	for b.Loop() {
		var req api.FinishRequest
		if err := decodeStrict(body, &req, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStrictLargeObject shows the decode stays linear in the
// number of keys of one object, duplicates checked.
func BenchmarkDecodeStrictLargeObject(b *testing.B) {
	body := []byte(bigLabels(5000))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := decodeStrict(body, register(), false); err != nil {
			b.Fatal(err)
		}
	}
}
