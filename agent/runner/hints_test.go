package runner

import (
	"maps"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestAddHints(t *testing.T) {
	hints := map[string]string{"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "eth0", "HOME": "/elsewhere"}
	cases := []struct {
		name   string
		config string
		want   map[string]string
	}{
		{"no job env", `{"command":"true"}`,
			map[string]string{"HOME": "/task", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "eth0"}},
		{"the job's env keeps its own value", `{"command":"true","env":{"NCCL_IB_HCA":"mlx5_3"}}`,
			map[string]string{"HOME": "/task", "NCCL_SOCKET_IFNAME": "eth0"}},
		{"a config that is not an object", `[1]`,
			map[string]string{"HOME": "/task", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "eth0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"HOME": "/task"}
			addHints(env, hints, api.Assignment{Config: []byte(c.config)})
			if !maps.Equal(env, c.want) {
				t.Fatalf("got %v, want %v", env, c.want)
			}
		})
	}
}
