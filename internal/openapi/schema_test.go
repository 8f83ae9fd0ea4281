package openapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type outer struct {
	inner
	B        bool              `json:"b"` // shallower: hides inner.B
	List     []string          `json:"list"`
	Opt      []string          `json:"opt,omitempty"`
	Map      map[string]uint64 `json:"map,omitempty"`
	Ptr      *inner            `json:"ptr"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Skipped  string            `json:"-"`
	private  string            //lint:ignore U1000 an unexported field, which JSON skips
	Untagged float64
	Self     *outer `json:"self,omitempty"`
}

type customJSON struct{}

func (customJSON) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The reflected schema is what encoding/json writes: embedded fields
// flattened (the shallower of two names wins), omitempty fields optional,
// slices, maps and pointers written without omitempty nullable, "-" and
// unexported fields absent, recursion through a $ref.
func TestReflectStruct(t *testing.T) {
	var r Reflector
	if got := encode(t, r.Ref(reflect.TypeFor[outer]())); got != `{"$ref":"#/components/schemas/Outer"}` {
		t.Fatalf("ref = %s", got)
	}
	defs, err := r.Defs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a":        `{"type":"string"}`,
		"b":        `{"type":"boolean"}`,
		"list":     `{"items":{"type":"string"},"type":["array","null"]}`,
		"opt":      `{"items":{"type":"string"},"type":"array"}`,
		"map":      `{"additionalProperties":{"minimum":0,"type":"integer"},"type":"object"}`,
		"ptr":      `{"anyOf":[{"$ref":"#/components/schemas/Inner"},{"type":"null"}]}`,
		"raw":      `{"description":"any JSON value"}`,
		"Untagged": `{"type":"number"}`,
		"self":     `{"$ref":"#/components/schemas/Outer"}`,
	}
	s := defs["Outer"]
	props := s["properties"].(Schema)
	if len(props) != len(want) {
		t.Errorf("properties %v, want %d", encode(t, props), len(want))
	}
	for name, js := range want {
		if got := encode(t, props[name]); got != js {
			t.Errorf("%s: %s, want %s", name, got, js)
		}
	}
	if got := encode(t, s["required"]); got != `["Untagged","a","b","list","ptr"]` {
		t.Errorf("required = %s", got)
	}
	if s["additionalProperties"] != false {
		t.Error("objects must refuse unlisted properties")
	}
	if _, ok := defs["Inner"]; !ok {
		t.Error("the pointed-to struct has no component")
	}
}

// Overrides replace a type's schema; alternatives widen it with anyOf.
func TestReflectOverridesAndAlternatives(t *testing.T) {
	type code string
	type wrap struct {
		C  code   `json:"c"`
		In *inner `json:"in,omitempty"`
	}
	r := Reflector{
		Override:     map[reflect.Type]Schema{reflect.TypeFor[code](): {"type": "string", "enum": []string{"x", "y"}}},
		Alternatives: map[reflect.Type][]Schema{reflect.TypeFor[inner](): {{"type": "string"}}},
	}
	r.Ref(reflect.TypeFor[wrap]())
	defs, err := r.Defs()
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, defs["Wrap"]["properties"].(Schema)["c"]); got != `{"enum":["x","y"],"type":"string"}` {
		t.Errorf("override: %s", got)
	}
	if got := encode(t, defs["Inner"]["anyOf"].([]any)[1]); got != `{"type":"string"}` {
		t.Errorf("alternative: %s", got)
	}
}

// A type the reflector cannot describe honestly is an error, not a
// guess: its own JSON encoding without an override, or two types under
// one name.
func TestReflectRefusesWhatItCannotDescribe(t *testing.T) {
	var r Reflector
	r.Ref(reflect.TypeFor[customJSON]())
	if _, err := r.Defs(); err == nil {
		t.Error("a type with its own MarshalJSON was described by its fields")
	}
	type Inner struct{ X int }
	var r2 Reflector
	r2.Ref(reflect.TypeFor[inner]())
	r2.Ref(reflect.TypeFor[Inner]())
	if _, err := r2.Defs(); !errors.Is(err, ErrNameClash) {
		t.Errorf("two types named Inner: %v", err)
	}
}

// A document renders to the same bytes every time, and lists its
// operations.
func TestDocumentIsDeterministic(t *testing.T) {
	build := func() *Document {
		var r Reflector
		d := &Document{OpenAPI: Version, Info: Info{Title: "t", Version: "1"}, Paths: map[string]PathItem{}}
		for _, p := range []string{"/b/{id}", "/a", "/c/{rest...}"} {
			d.Paths[Route(p)] = PathItem{"get": {OperationID: p, Security: []SecurityRequirement{}, Responses: map[string]Response{
				"200": {Description: "ok", Content: map[string]MediaType{"application/json": {Schema: r.Ref(reflect.TypeFor[outer]())}}}}}}
		}
		d.Components.Schemas, _ = r.Defs()
		return d
	}
	first, err := build().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, _ := build().Marshal()
		if string(again) != string(first) {
			t.Fatal("the same document rendered to different bytes")
		}
	}
	if got := build().Operations(); !reflect.DeepEqual(got, []string{"GET /a", "GET /b/{id}", "GET /c/{rest}"}) {
		t.Errorf("operations = %v", got)
	}
}
