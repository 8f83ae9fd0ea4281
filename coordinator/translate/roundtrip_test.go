package translate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// fill sets every field of v, recursively, to a value that is not its zero
// value, so a translation that drops any field shows in a round trip.
func fill(t *testing.T, rng *rand.Rand, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", path, rng.IntN(1000)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(1 + rng.IntN(1000)))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(1 + rng.IntN(1000)))
	case reflect.Float64:
		v.SetFloat(0.5 + float64(rng.IntN(100)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, rng, v.Elem(), path)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(fmt.Sprintf(`{"k":%d}`, rng.IntN(1000))))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, rng, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, rng, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("%s: no filler for kind %s: teach fill this kind", path, v.Kind())
	}
}

func filled[T any](t *testing.T, seed uint64) T {
	var v T
	fill(t, rand.New(rand.NewPCG(seed, 1)), reflect.ValueOf(&v).Elem(), reflect.TypeFor[T]().Name())
	return v
}

// roundTrip checks both directions of a translation pair with every field
// set: wire → state → wire and state → wire → state come back equal.
// readOnly, when not nil, clears on the wire value the fields that are
// read and never written (an older name a request may still use).
func roundTrip[W, S any](t *testing.T, from func(W) S, to func(S) W, readOnly func(*W)) {
	t.Helper()
	for seed := range uint64(5) {
		w := filled[W](t, seed)
		got := to(from(w))
		if readOnly != nil {
			readOnly(&w)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%T → state → wire lost a field:\n got %+v\nwant %+v", w, got, w)
		}
		s := filled[S](t, seed)
		if got := from(to(s)); !reflect.DeepEqual(got, s) {
			t.Errorf("%T → wire → state lost a field:\n got %+v\nwant %+v", s, got, s)
		}
	}
}

func TestTranslationsLoseNoField(t *testing.T) {
	t.Run("JobSpec", func(t *testing.T) { roundTrip(t, JobSpecFromAPI, JobSpecToAPI, nil) })
	t.Run("Devices", func(t *testing.T) {
		// parent, the name older agents gave parent_uuid, is read into
		// it where requests are validated (httpapi) and never written.
		roundTrip(t, DevicesFromAPI, DevicesToAPI, func(ds *[]api.Device) {
			for i := range *ds {
				(*ds)[i].LegacyParent = ""
			}
		})
	})
	t.Run("GroupMembers", func(t *testing.T) { roundTrip(t, GroupMembersFromAPI, GroupMembersToAPI, nil) })
	t.Run("ArtifactRefs", func(t *testing.T) { roundTrip(t, ArtifactRefsFromAPI, ArtifactRefsToAPI, nil) })
	t.Run("TaskArtifacts", func(t *testing.T) { roundTrip(t, TaskArtifactsFromAPI, TaskArtifactsToAPI, nil) })
}

// The round trip would not see a field both sides lack a copy of: this
// checks that each pair of types has the same fields with the same JSON
// names, so a value logged when the state's types were the wire's aliases
// reads the same now.
func TestStateTypesKeepTheWireNames(t *testing.T) {
	pairs := []struct{ wire, state reflect.Type }{
		{reflect.TypeFor[api.JobSpec](), reflect.TypeFor[command.JobSpec]()},
		{reflect.TypeFor[api.Resources](), reflect.TypeFor[command.Resources]()},
		{reflect.TypeFor[api.Target](), reflect.TypeFor[command.Target]()},
		{reflect.TypeFor[api.AffinityRule](), reflect.TypeFor[command.AffinityRule]()},
		{reflect.TypeFor[api.Device](), reflect.TypeFor[command.Device]()},
		{reflect.TypeFor[api.DeviceLink](), reflect.TypeFor[command.DeviceLink]()},
		{reflect.TypeFor[api.GroupMember](), reflect.TypeFor[command.GroupMember]()},
		{reflect.TypeFor[api.ArtifactRef](), reflect.TypeFor[command.ArtifactRef]()},
		{reflect.TypeFor[api.TaskArtifact](), reflect.TypeFor[command.TaskArtifact]()},
	}
	for _, p := range pairs {
		tags := func(ty reflect.Type) map[string]string {
			m := map[string]string{}
			for i := range ty.NumField() {
				m[ty.Field(i).Name] = ty.Field(i).Tag.Get("json")
			}
			return m
		}
		w := tags(p.wire)
		if p.state == reflect.TypeFor[command.Device]() {
			// The wire renamed parent to parent_uuid, as PROTOCOL.md
			// names it; the state keeps the name its log was written
			// with, which the wire still reads (LegacyParent).
			w["Parent"] = w["LegacyParent"]
			delete(w, "LegacyParent")
		}
		if s := tags(p.state); !reflect.DeepEqual(w, s) {
			t.Errorf("%s: the wire's fields and JSON names %v, the state's %v", p.state.Name(), w, s)
		}
	}
}

// A log entry written before inputs and outputs had paths carries bare
// digests; the state's types still read them.
func TestStateTypesReadBareDigests(t *testing.T) {
	var spec command.JobSpec
	if err := json.Unmarshal([]byte(`{"executor":"exec","inputs":["abc",{"sha256":"def","path":"d/x"}]}`), &spec); err != nil {
		t.Fatal(err)
	}
	want := []command.ArtifactRef{{SHA256: "abc"}, {SHA256: "def", Path: "d/x"}}
	if !reflect.DeepEqual(spec.Inputs, want) {
		t.Fatalf("inputs %+v, want %+v", spec.Inputs, want)
	}
	var fin command.FinishTask
	if err := json.Unmarshal([]byte(`{"artifacts":["abc",{"path":"o/y","sha256":"def","size":3}]}`), &fin); err != nil {
		t.Fatal(err)
	}
	wantOut := []command.TaskArtifact{{SHA256: "abc"}, {Path: "o/y", SHA256: "def", Size: 3}}
	if !reflect.DeepEqual(fin.Artifacts, wantOut) {
		t.Fatalf("artifacts %+v, want %+v", fin.Artifacts, wantOut)
	}
	if got := want[0].StagePath(); got != "inputs/abc" {
		t.Fatalf("StagePath %q", got)
	}
}
