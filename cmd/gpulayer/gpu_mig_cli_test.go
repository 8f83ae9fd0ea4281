package main

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// gpu mig asks for a GPU's MIG layout (the record then holds the request,
// pending), refuses a profile that is not one before any call, passes the
// coordinator's refusal of a layout the model cannot take, and --clear
// drops the request.
func TestGPUMIGCommand(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	if _, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "node-a", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{{UUID: "GPU-a0", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, ComputeCapability: "8.0", Healthy: true}}}); err != nil {
		t.Fatal(err)
	}
	env := []string{"GPULAYER_ADDR=" + h.URL, "GPULAYER_TOKEN=" + h.AdminToken}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gpu", "mig", "node-a", "GPU-a0", "3g.40gb,big"}, 2, `"big" is not a MIG profile`},
		{[]string{"gpu", "mig", "node-a", "GPU-a0"}, 2, "give 3 arguments"},
		{[]string{"gpu", "mig", "node-a", "GPU-a0", "4g.40gb,4g.40gb"}, 1, "invalid_argument"},
		{[]string{"gpu", "mig", "node-a", "GPU-a0", "3g.40gb,3g.40gb"}, 0, "node-a: GPU GPU-a0 MIG layout 3g.40gb,3g.40gb pending"},
	} {
		r := run(t, env, c.args...)
		if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
			t.Errorf("gpulayer %s: exit %d, %q %q; want %d and %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.code, c.want)
		}
	}
	w, err := h.Client(t, h.AdminToken).Worker(ctx, "node-a")
	if err != nil || len(w.MIGLayouts) != 1 || w.MIGLayouts[0].State != api.MIGLayoutPending || strings.Join(w.MIGLayouts[0].Layout, ",") != "3g.40gb,3g.40gb" {
		t.Fatalf("after gpu mig: %+v %v", w.MIGLayouts, err)
	}
	if r := run(t, env, "gpu", "mig", "node-a", "GPU-a0", "--clear"); r.code != 0 || !strings.Contains(r.stdout, "request cleared") {
		t.Fatalf("gpu mig --clear: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if w, _ := h.Client(t, h.AdminToken).Worker(ctx, "node-a"); len(w.MIGLayouts) != 0 {
		t.Fatalf("after --clear: %+v", w.MIGLayouts)
	}
}
