// Command gpuinventory prints the GPU inventory that the GpuLayer agent
// would advertise, read through agent/devices exactly as the agent reads it.
//
// The default CSV output has the columns and format of
//
//	nvidia-smi --query-gpu=uuid,name,memory.total,driver_version --format=csv,noheader,nounits
//
// so the two can be diffed on a GPU machine (scripts/gpu-check.sh does).
// -json prints every field, health included. Logs go to stderr.
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
	"github.com/gpulayer/gpulayer/sdk/api"
)

func main() {
	fake := flag.String("fake-gpus", devices.FakeReal,
		`"" for the real NVML, "none", or a fake set: `+strings.Join(devices.FakeNames(), ", "))
	asJSON := flag.Bool("json", false, "print all fields as JSON instead of nvidia-smi style CSV")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
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
