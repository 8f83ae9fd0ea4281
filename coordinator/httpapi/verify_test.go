package httpapi

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A GPU whose report contradicts its model is held back, and its MIG
// devices with it; the report the agent sent is not changed, and an
// agent's pending_approval is dropped.
func TestVerifyDevicesHoldsBackAGPUAndItsMIGDevices(t *testing.T) {
	in := []api.Device{
		{UUID: "GPU-ok", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, PendingApproval: true},
		{UUID: "GPU-small", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 40960, Healthy: true, MIGEnabled: true},
		{UUID: "MIG-a", Name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb", MemoryMiB: 9984, Healthy: true, Parent: "GPU-small", MIGProfile: "1g.10gb"},
	}
	out := verifyDevices(in)
	if !out[0].Healthy || out[0].PendingApproval {
		t.Fatalf("the sound GPU: %+v", out[0])
	}
	if out[1].Healthy || !strings.HasPrefix(out[1].HealthReason, "not offered: the report does not match its model") {
		t.Fatalf("the contradicting GPU: %+v", out[1])
	}
	if out[2].Healthy || out[2].HealthReason != "its GPU is "+out[1].HealthReason {
		t.Fatalf("its MIG device: %+v", out[2])
	}
	if !in[1].Healthy || !in[2].Healthy || !in[0].PendingApproval {
		t.Fatal("the agent's report was changed in place")
	}
}
