//go:build cgo && linux

package nvml

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// faultPoll is how often the faults file is read for appended lines.
const faultPoll = 100 * time.Millisecond

// OpenFakeWithFaults serves the named fake set as OpenFakeSeeded does,
// but through nvmltest's Machine over the same go-nvml mock server, so
// that its GPUs are watched for health (Watch) like real ones, and
// delivers the faults appended to the file at faults (created, 0600, if
// absent) as the driver would: a line "<uuid> xid <n>" is Xid n on that
// GPU, "<uuid> lost" makes it fall off the bus (an Xid 79, then every
// call about it fails), "<uuid> throttle hw-thermal[,…]" (or "none") sets
// the reasons its clocks are held down, "<uuid> retire-pending on|off"
// whether memory pages wait for a reset to be retired: the last two make
// a GPU degraded (docs/gpus.md, "Polled inputs"). Lines are read as they are appended, until ctx
// ends; a malformed line, or one naming no GPU of the set, is logged and
// skipped. This is the fault injection of PROTOCOL.md's --fake-gpu-faults.
func OpenFakeWithFaults(ctx context.Context, logger *slog.Logger, name, seed, faults string) (*Source, error) {
	if _, ok := fakeServers[name]; !ok {
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownFake, name, FakeNames())
	}
	if logger == nil {
		logger = slog.Default()
	}
	f, err := os.OpenFile(faults, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fake GPU faults file: %w", err)
	}
	var opts []nvmltest.Option
	if seed != "" {
		uuids := make([]string, fakeSpecs[name].count)
		for i := range uuids {
			uuids[i] = seededUUID(seed, name, i)
		}
		opts = append(opts, nvmltest.WithUUIDs(uuids...))
	}
	m := nvmltest.New(name, opts...)
	src, err := OpenInterface(ctx, logger, m.Interface())
	if err != nil {
		f.Close()
		return nil, err
	}
	uuids := make([]string, m.Count())
	for i := range uuids {
		uuids[i], _ = m.Device(i).GetUUID()
	}
	go func() {
		defer f.Close()
		followFaults(ctx, logger, f, faultPoll, func(line string) error { return injectFault(m, uuids, line) })
	}()
	return src, nil
}

// errBadFault: a line of the faults file that says no fault.
var errBadFault = errors.New(`want "<uuid> xid <n>", "<uuid> lost", "<uuid> throttle <reason>[,<reason>…]|none" or "<uuid> retire-pending on|off"`)

// fakeThrottles are the clocks event reasons a faults file line may name.
var fakeThrottles = map[string]uint64{
	"hw-slowdown":    gonvml.ClocksThrottleReasonHwSlowdown,
	"hw-thermal":     gonvml.ClocksThrottleReasonHwThermalSlowdown,
	"hw-power-brake": gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown,
	"sw-thermal":     gonvml.ClocksEventReasonSwThermalSlowdown,
	"sw-power-cap":   gonvml.ClocksEventReasonSwPowerCap, // normal: degrades nothing
	"none":           0,
}

// throttleMask reads a line's comma-separated clocks event reasons.
func throttleMask(names string) (uint64, error) {
	var mask uint64
	for name := range strings.SplitSeq(names, ",") {
		bit, ok := fakeThrottles[name]
		if !ok {
			return 0, fmt.Errorf("throttle reason %q: %w", name, errBadFault)
		}
		mask |= bit
	}
	return mask, nil
}

// injectFault delivers one line's fault to m, whose GPUs are uuids.
func injectFault(m *nvmltest.Machine, uuids []string, line string) error {
	f := strings.Fields(line)
	if len(f) < 2 {
		return errBadFault
	}
	i := slices.Index(uuids, f[0])
	if i < 0 {
		return fmt.Errorf("no GPU %s in this fake set", f[0])
	}
	switch {
	case len(f) == 2 && f[1] == "lost":
		m.InjectGPULost(i)
	case len(f) == 3 && f[1] == "xid":
		xid, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil {
			return fmt.Errorf("xid %q: %w", f[2], errBadFault)
		}
		m.InjectXid(i, xid)
	case len(f) == 3 && f[1] == "throttle":
		mask, err := throttleMask(f[2])
		if err != nil {
			return err
		}
		m.SetClocksEventReasons(i, mask)
	case len(f) == 3 && f[1] == "retire-pending" && (f[2] == "on" || f[2] == "off"):
		m.SetRetiredPagesPending(i, f[2] == "on")
	default:
		return errBadFault
	}
	return nil
}

// followFaults hands each complete line appended to r to deliver, reading
// every poll until ctx ends. Blank lines and lines starting with '#' are
// skipped; a line deliver refuses is logged with its number.
func followFaults(ctx context.Context, log *slog.Logger, r io.Reader, poll time.Duration, deliver func(string) error) {
	br := bufio.NewReader(r)
	var partial strings.Builder
	n := 0
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		for {
			chunk, err := br.ReadString('\n')
			partial.WriteString(chunk)
			if err != nil {
				break // the rest of the line, if any, is not written yet
			}
			line := strings.TrimSpace(partial.String())
			partial.Reset()
			n++
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if err := deliver(line); err != nil {
				log.Warn("fake GPU faults file: line skipped", "line", n, "error", err)
				continue
			}
			log.Info("fake GPU fault delivered", "line", n, "fault", line)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
