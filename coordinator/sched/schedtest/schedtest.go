// Package schedtest builds the records the scheduler's tests place work
// on, so that each package's fake view starts from the same fleet.
package schedtest

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Worker is a ready worker running exec with every capability, n healthy
// 80 GiB GPUs named GPU-<id>-<i> and room for n tasks.
func Worker(id string, n int) *record.Worker {
	w := &record.Worker{ID: id, Status: record.WorkerReady, MaxTasks: n, Executors: []string{"exec"}, Capabilities: []string{"*"}}
	for i := range n {
		w.Devices = append(w.Devices, command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", id, i), Name: "H100", MemoryMiB: 81920, Healthy: true})
	}
	return w
}
