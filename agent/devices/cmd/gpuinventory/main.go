// Command gpuinventory prints the GPU inventory that the GpuLayer agent
// would advertise, read through agent/devices exactly as the agent reads it.
//
// The default CSV output has the columns and format of
//
//	nvidia-smi --query-gpu=uuid,name,memory.total,driver_version --format=csv,noheader,nounits
//
// so the two can be diffed on a GPU machine (scripts/gpu-check.sh does).
// -json prints every field, health included. -probe prints instead what
// the real NVML supports that the agent's health watcher and metrics rely
// on (event types and registration, the recovery-action field, one metrics
// sample) as JSON; it changes no GPU setting. -preflight runs the agent's
// gang preflight on every whole GPU (NVML's checks and, where the CUDA
// driver loads, the memory pattern, matmul and peer bandwidth checks)
// and prints the outcomes as JSON, exiting 1 when a GPU fails. Logs go
// to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func main() {
	fake := flag.String("fake-gpus", devices.FakeReal,
		`"" for the real NVML, "none", or a fake set: `+strings.Join(devices.FakeNames(), ", "))
	asJSON := flag.Bool("json", false, "print all fields as JSON instead of nvidia-smi style CSV")
	probe := flag.Bool("probe", false, "print what the real NVML supports (events, recovery action, metrics) as JSON")
	preflight := flag.Bool("preflight", false, "run the agent's gang preflight on every GPU of the real NVML and print the outcomes as JSON")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *probe {
		if err := printProbe(ctx, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gpuinventory:", err)
			os.Exit(1)
		}
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *preflight {
		if err := printPreflight(ctx, logger, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "gpuinventory:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, logger, os.Stdout, *fake, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "gpuinventory:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, logger *slog.Logger, w io.Writer, fake string, asJSON bool) error {
	src, err := devices.Open(ctx, logger, fake)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	devs, err := src.Devices(ctx)
	if err != nil {
		return fmt.Errorf("read inventory: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(devs)
	}
	return writeCSV(w, devs)
}

// printProbe writes the real NVML's probe report as indented JSON.
func printProbe(ctx context.Context, w io.Writer) error {
	r, err := nvml.ProbeSystem(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeCSV writes one line per device in nvidia-smi's csv,noheader,nounits
// style: fields separated by ", ", unquoted, memory in MiB.
func writeCSV(w io.Writer, devs []api.Device) error {
	for _, d := range devs {
		if _, err := fmt.Fprintf(w, "%s, %s, %d, %s\n", d.UUID, d.Name, d.MemoryMiB, d.DriverVersion); err != nil {
			return err
		}
	}
	return nil
}
