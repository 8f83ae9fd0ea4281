package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/runner"
)

// preflightBound is the agent's bound on a preflight.
const preflightBound = runner.DefaultPreflightBound

// errPreflightFailed: some GPU failed a check.
var errPreflightFailed = errors.New("a GPU failed its preflight")

// preflightReport is what -preflight prints.
type preflightReport struct {
	Bound  string                `json:"bound"`
	TookMS int64                 `json:"took_ms"`
	Checks []nvml.PreflightCheck `json:"checks"`
}

// printPreflight runs the agent's preflight (NVML's checks and, where
// CUDA loads, the compute checks) on every whole GPU of the real NVML,
// within the agent's bound, and writes the outcomes as JSON.
func printPreflight(ctx context.Context, logger *slog.Logger, w io.Writer) error {
	src, err := devices.Open(ctx, logger, devices.FakeReal)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	p, ok := src.(interface {
		Preflight(ctx context.Context, uuids []string) []nvml.PreflightCheck
	})
	if !ok {
		return errors.New("no NVML here: nothing to check")
	}
	devs, err := src.Devices(ctx)
	if err != nil {
		return fmt.Errorf("read inventory: %w", err)
	}
	var gpus []string
	for _, d := range devs {
		if !strings.HasPrefix(d.UUID, "MIG-") {
			gpus = append(gpus, d.UUID)
		}
	}
	bctx, cancel := context.WithTimeout(ctx, preflightBound)
	defer cancel()
	began := time.Now()
	r := preflightReport{Bound: preflightBound.String(), Checks: p.Preflight(bctx, gpus)}
	r.TookMS = time.Since(began).Milliseconds()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	for _, c := range r.Checks {
		if c.Status == nvml.PreflightFail {
			return fmt.Errorf("%w: %s %s: %s", errPreflightFailed, c.GPU, c.Name, c.Detail)
		}
	}
	return nil
}
