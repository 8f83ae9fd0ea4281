package fabric

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sysfs writes a fake /sys/class/infiniband: adapter name → NUMA node
// ("" for none) and ports (state, link layer).
type fakePort struct{ state, link string }

func sysfs(t *testing.T, adapters map[string]struct {
	numa  string
	ports []fakePort
}) string {
	t.Helper()
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, a := range adapters {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if a.numa != "" {
			write(filepath.Join(dir, "device", "numa_node"), a.numa)
		}
		for i, p := range a.ports {
			pd := filepath.Join(dir, "ports", string(rune('1'+i)))
			write(filepath.Join(pd, "state"), p.state)
			write(filepath.Join(pd, "link_layer"), p.link)
			write(filepath.Join(pd, "rate"), "400 Gb/sec (4X NDR)")
		}
	}
	return root
}

type adapterSpec = struct {
	numa  string
	ports []fakePort
}

var (
	up     = fakePort{"4: ACTIVE", LinkInfiniBand}
	down   = fakePort{"1: DOWN", LinkInfiniBand}
	roceUp = fakePort{"4: ACTIVE", LinkEthernet}
)

func TestDiscover(t *testing.T) {
	root := sysfs(t, map[string]adapterSpec{
		"mlx5_1": {"1", []fakePort{up}},
		"mlx5_0": {"0", []fakePort{up, down}},
		"mlx5_2": {"-1", []fakePort{roceUp}},
		"mlx5_3": {"", nil},
	})
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Adapter{
		{Name: "mlx5_0", NUMANode: 0, Ports: []Port{{1, true, LinkInfiniBand, "400 Gb/sec (4X NDR)"}, {2, false, LinkInfiniBand, "400 Gb/sec (4X NDR)"}}},
		{Name: "mlx5_1", NUMANode: 1, Ports: []Port{{1, true, LinkInfiniBand, "400 Gb/sec (4X NDR)"}}},
		{Name: "mlx5_2", NUMANode: -1, Ports: []Port{{1, true, LinkEthernet, "400 Gb/sec (4X NDR)"}}},
		{Name: "mlx5_3", NUMANode: -1}, // no ports directory
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Discover:\n got %+v\nwant %+v", got, want)
	}
	if caps := Capabilities(got); !reflect.DeepEqual(caps, []string{CapInfiniBand, CapRoCE}) {
		t.Fatalf("capabilities %v", caps)
	}
}

// A host with no RDMA stack has no adapters, and says nothing is wrong.
func TestDiscoverWithoutRDMA(t *testing.T) {
	got, err := Discover(filepath.Join(t.TempDir(), "absent"))
	if err != nil || got != nil {
		t.Fatalf("Discover of no directory: %v, %v", got, err)
	}
	if caps := Capabilities(got); caps != nil {
		t.Fatalf("capabilities of no adapters: %v", caps)
	}
}

func TestNCCLHints(t *testing.T) {
	adapters := []Adapter{
		{Name: "mlx5_0", NUMANode: 0, Ports: []Port{{Num: 1, Active: true, LinkLayer: LinkInfiniBand}}},
		{Name: "mlx5_1", NUMANode: 1, Ports: []Port{{Num: 1, Active: true, LinkLayer: LinkInfiniBand}, {Num: 2, Active: false}}},
		{Name: "mlx5_2", NUMANode: 1, Ports: []Port{{Num: 1, Active: false}}},
	}
	on := Hints{Enabled: true}
	cases := []struct {
		name     string
		hints    Hints
		adapters []Adapter
		numa     []int
		want     map[string]string
	}{
		{"disabled gives nothing", Hints{}, adapters, []int{1}, nil},
		{"the GPU's NUMA node first, ports down left out", on, adapters, []int{1},
			map[string]string{"NCCL_IB_HCA": "=mlx5_1:1,mlx5_0:1"}},
		{"GPUs on both nodes keep the name order", on, adapters, []int{0, 1},
			map[string]string{"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}},
		{"unknown NUMA keeps the name order", on, adapters, []int{-1},
			map[string]string{"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}},
		{"no port up disables IB", on, adapters[2:], []int{1},
			map[string]string{"NCCL_IB_DISABLE": "1"}},
		{"socket interface and extras", Hints{Enabled: true, SocketIfname: "eth0", Extra: map[string]string{"NCCL_IB_GID_INDEX": "3"}}, nil, nil,
			map[string]string{"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_GID_INDEX": "3"}},
		{"an extra overrides a found value", Hints{Enabled: true, Extra: map[string]string{"NCCL_IB_HCA": "mlx5"}}, adapters, []int{0},
			map[string]string{"NCCL_IB_HCA": "mlx5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.hints.Env(c.adapters, c.numa); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseExtra(t *testing.T) {
	got, err := ParseExtra([]string{"NCCL_IB_GID_INDEX=3", "NCCL_DEBUG=INFO", "NCCL_NET_GDR_LEVEL="})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"NCCL_IB_GID_INDEX": "3", "NCCL_DEBUG": "INFO", "NCCL_NET_GDR_LEVEL": ""}) {
		t.Fatalf("ParseExtra: %v, %v", got, err)
	}
	for _, bad := range []string{"LD_PRELOAD=/x.so", "NCCL_", "NCCL_DEBUG", "PATH=/tmp", "NCCL_A B=1", "=x"} {
		if _, err := ParseExtra([]string{bad}); !errors.Is(err, ErrNotNCCLVariable) {
			t.Errorf("ParseExtra(%q): %v, want ErrNotNCCLVariable", bad, err)
		}
	}
}
