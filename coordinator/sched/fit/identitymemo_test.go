package fit

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The cached identity is the digest of the device as reported now: a
// change to any field the identity reads gives the new digest, never the
// cached one.
func TestMemoIdentityFollowsTheDevice(t *testing.T) {
	numa := 1
	base := command.Device{UUID: "GPU-memo", Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", PCIDevice: "0x2330", NUMANode: &numa,
		Links: []command.DeviceLink{{Peer: "GPU-2", Path: "NV18", NvLinks: 18}}}
	other := 0
	cases := []struct {
		name   string
		change func(d *command.Device)
	}{
		{"as reported", func(*command.Device) {}},
		{"another model", func(d *command.Device) { d.Name = "NVIDIA A100-SXM4-80GB" }},
		{"MIG mode", func(d *command.Device) { d.MIGEnabled = true }},
		{"another NUMA node", func(d *command.Device) { d.NUMANode = &other }},
		{"no NUMA node", func(d *command.Device) { d.NUMANode = nil }},
		{"a link fewer", func(d *command.Device) { d.Links = nil }},
		{"sharing", func(d *command.Device) { d.Sharing = command.SharingEnforced }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			memoIdentity(base) // cached as the base device
			d := base
			d.Links = append([]command.DeviceLink(nil), base.Links...)
			tc.change(&d)
			if got, want := memoIdentity(d), Identity(d); got != want {
				t.Fatalf("memo %s, identity %s", got, want)
			}
		})
	}
}

// Fields that run together differently are different fingerprints: the
// lengths written before each string keep one field's end from reading
// as the next one's start.
func TestIdentityPrintKeepsFieldsApart(t *testing.T) {
	a := command.Device{Name: "ab", ComputeCapability: "c"}
	b := command.Device{Name: "a", ComputeCapability: "bc"}
	if identityPrint(a) == identityPrint(b) {
		t.Fatal("two devices whose fields run together share a fingerprint")
	}
	numa := 12
	c := command.Device{NUMANode: &numa}
	if identityPrint(c) == identityPrint(command.Device{}) {
		t.Fatal("a NUMA node and none share a fingerprint")
	}
	again := a
	if identityPrint(a) != identityPrint(again) {
		t.Fatal("one device, two fingerprints")
	}
}
