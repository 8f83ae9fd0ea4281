package plugins

import (
	"errors"
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"container", "exec"}) {
		t.Errorf("Names() = %v", got)
	}
	for _, name := range Names() {
		e, ok := Lookup(name)
		if !ok {
			t.Fatalf("Lookup(%q) failed", name)
		}
		info, err := e.Info(t.Context())
		if err != nil || info.Name != name {
			t.Errorf("%q: Info = %+v, %v; want its own name", name, info, err)
		}
		other, _ := Lookup(name)
		if other == e {
			t.Errorf("%q: Lookup returned a shared instance", name)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
	if err := ServeBuiltin("nope"); !errors.Is(err, ErrUnknownPlugin) {
		t.Errorf("ServeBuiltin(nope) = %v, want ErrUnknownPlugin", err)
	}
}
