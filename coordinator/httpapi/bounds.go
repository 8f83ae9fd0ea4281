package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The bound checks: every string, list and map a request carries is held
// to the limits in sdk/api/limits.go. A refusal names the field and says
// how big the value was, never the value itself (which may be megabytes).

// checkLen refuses a string longer than limit bytes.
func checkLen[T ~string | ~[]byte](field string, v T, limit int) error {
	if len(v) > limit {
		return invalidf("%s: %d bytes, at most %d", field, len(v), limit)
	}
	return nil
}

// checkCount refuses a list or map with more than limit entries.
func checkCount(field string, n, limit int) error {
	if n > limit {
		return invalidf("%s: %d entries, at most %d", field, n, limit)
	}
	return nil
}

// checkStrings bounds a list of strings: its length and each entry.
func checkStrings(field string, list []string, count, each int) error {
	if err := checkCount(field, len(list), count); err != nil {
		return err
	}
	for i, v := range list {
		if err := checkLen(fmt.Sprintf("%s[%d]", field, i), v, each); err != nil {
			return err
		}
	}
	return nil
}

// checkStringMap bounds a map of strings: its size, each key (non-empty)
// and each value. Keys are visited in order so the message is stable.
func checkStringMap(field string, m map[string]string, count, keyLimit, valueLimit int) error {
	if err := checkCount(field, len(m), count); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == "":
			return invalidf("%s: keys must not be empty", field)
		case len(k) > keyLimit:
			return invalidf("%s: a key of %d bytes, at most %d", field, len(k), keyLimit)
		case len(m[k]) > valueLimit:
			return invalidf("%s[%s]: value is %d bytes, at most %d", field, shortQuote(k), len(m[k]), valueLimit)
		}
	}
	return nil
}

// validateLabelMap bounds worker and join-token labels.
func validateLabelMap(labels map[string]string) error {
	return checkStringMap("labels", labels, api.MaxLabels, api.MaxLabelKeyBytes, api.MaxLabelValueBytes)
}

// validateInventory bounds what a worker says about itself at
// registration, enrollment and in heartbeats. A nil list is "unchanged"
// in a heartbeat and "none" at registration; both are within bounds.
func validateInventory(capabilities, executors []string, devices []api.Device) error {
	if err := checkStrings("capabilities", capabilities, api.MaxCapabilities, api.MaxCapabilityBytes); err != nil {
		return err
	}
	if err := checkCount("executors", len(executors), api.MaxExecutors); err != nil {
		return err
	}
	for i, e := range executors {
		if err := checkLen(fmt.Sprintf("executors[%d]", i), e, api.MaxExecutorBytes); err != nil {
			return err
		}
		if !executorPattern.MatchString(e) {
			return invalidf("executors[%d]: %s must match %s", i, shortQuote(e), executorPattern.String())
		}
	}
	return validateDevices(devices)
}

// pciDevicePattern is a PCI id as a device report carries it.
var pciDevicePattern = regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$`)

// validateDevices bounds a device list and refuses a device without a
// uuid or a uuid listed twice. It first reads the devices as PROTOCOL.md
// words them (readDeviceWords).
func validateDevices(devs []api.Device) error {
	if err := checkCount("devices", len(devs), api.MaxDevices); err != nil {
		return err
	}
	if err := readDeviceWords(devs); err != nil {
		return err
	}
	seen := make(map[string]bool, len(devs))
	for i, d := range devs {
		field := fmt.Sprintf("devices[%d]", i)
		for _, f := range []struct {
			name  string
			v     string
			limit int
		}{
			{"uuid", d.UUID, api.MaxDeviceUUIDBytes},
			{"name", d.Name, api.MaxDeviceNameBytes},
			{"driver_version", d.DriverVersion, api.MaxDeviceFieldBytes},
			{"cuda_version", d.CUDAVersion, api.MaxDeviceFieldBytes},
			{"compute_capability", d.ComputeCapability, api.MaxDeviceFieldBytes},
			{"pci_device", d.PCIDevice, api.MaxDeviceFieldBytes},
			{"health_reason", d.HealthReason, api.MaxDeviceHealthReasonBytes},
			{"mig_error", d.MIGError, api.MaxDeviceHealthReasonBytes},
		} {
			if err := checkLen(field+"."+f.name, f.v, f.limit); err != nil {
				return err
			}
		}
		if d.PCIDevice != "" && !pciDevicePattern.MatchString(d.PCIDevice) {
			return invalidf("%s.pci_device %s is not a PCI id (vendor:device, as 10de:2330)", field, shortQuote(d.PCIDevice))
		}
		switch d.Health {
		case "", api.HealthHealthy, api.HealthDegraded, api.HealthUnhealthy, api.HealthRecovering, api.HealthUnknown:
		default:
			return invalidf("%s.health: %s is not one of healthy, degraded, unhealthy, recovering, unknown", field, shortQuote(d.Health))
		}
		if d.Healthy && d.Health != "" && d.Health != api.HealthHealthy && d.Health != api.HealthDegraded {
			return invalidf("%s.healthy: a device whose health is %s cannot be healthy", field, d.Health)
		}
		switch {
		case d.UUID == "":
			return invalidf("%s: every device needs a uuid", field)
		case seen[d.UUID]:
			return invalidf("%s: uuid %s listed twice", field, shortQuote(d.UUID))
		}
		seen[d.UUID] = true
	}
	if err := validateMIGDevices(devs); err != nil {
		return err
	}
	if err := validateDeviceSharing(devs); err != nil {
		return err
	}
	return validateLinks(devs, seen)
}

// readDeviceWords reads, in place, each device as PROTOCOL.md words it:
// a MIG device's GPU as parent_uuid (the older "parent" is read as it,
// and the two may not name different GPUs), and a health word that lets
// the device be given work (healthy, or this project's degraded) as the
// healthy flag placement reads, for a device reported whole (its name
// and memory: what the contract's device carries). The contract's
// clients send the word alone; this project's agents send both, and
// never the word healthy for a device they do not offer
// (agent.deviceView). An agent of an earlier release could send the
// word healthy with the flag false for a GPU its inventory could not
// read whole, which then lacks its name or memory: still not offered.
func readDeviceWords(devs []api.Device) error {
	for i := range devs {
		d := &devs[i]
		if d.LegacyParent != "" {
			if d.Parent != "" && d.Parent != d.LegacyParent {
				return invalidf("devices[%d]: parent_uuid %s and parent %s name two GPUs", i, shortQuote(d.Parent), shortQuote(d.LegacyParent))
			}
			d.Parent, d.LegacyParent = d.LegacyParent, ""
		}
		if (d.Health == api.HealthHealthy || d.Health == api.HealthDegraded) && d.Name != "" && d.MemoryMiB > 0 {
			d.Healthy = true
		}
	}
	return nil
}

// maxNvLinks bounds a link's NVLink count (NVML's own maximum per GPU).
const maxNvLinks = 64

// validateLinks checks each device's topology: a NUMA node of 0 or more,
// at most one link to each other device of the report (never itself),
// with a known path and an NVLink count only on NVLink paths.
func validateLinks(devs []api.Device, uuids map[string]bool) error {
	for i, d := range devs {
		field := fmt.Sprintf("devices[%d]", i)
		if d.NUMANode != nil && (*d.NUMANode < 0 || *d.NUMANode > 1<<16) {
			return invalidf("%s.numa_node: %d is not a NUMA node", field, *d.NUMANode)
		}
		if err := checkCount(field+".links", len(d.Links), api.MaxDevices); err != nil {
			return err
		}
		peers := make(map[string]bool, len(d.Links))
		for j, l := range d.Links {
			lf := fmt.Sprintf("%s.links[%d]", field, j)
			switch {
			case l.Peer == d.UUID:
				return invalidf("%s: a device has no link to itself", lf)
			case !uuids[l.Peer]:
				return invalidf("%s.peer: %s is not a device of this report", lf, shortQuote(l.Peer))
			case peers[l.Peer]:
				return invalidf("%s.peer: %s listed twice", lf, shortQuote(l.Peer))
			case !slices.Contains(api.LinkPaths, l.Path):
				return invalidf("%s.path: %s is not one of %s", lf, shortQuote(l.Path), strings.Join(api.LinkPaths, ", "))
			case l.NvLinks < 0 || l.NvLinks > maxNvLinks:
				return invalidf("%s.nvlinks: %d is not between 0 and %d", lf, l.NvLinks, maxNvLinks)
			case l.NvLinks > 0 && l.Path != api.PathNvLink && l.Path != api.PathNVSwitch:
				return invalidf("%s.nvlinks: only an nvlink or nvswitch path has NVLinks", lf)
			}
			peers[l.Peer] = true
		}
	}
	return nil
}

// shortQuote quotes a value for a message, cut to a readable length.
func shortQuote(s string) string {
	const keep = 64
	if len(s) <= keep {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:keep], len(s))
}

// validateJobBounds bounds the sizes in a job spec that validateJobSpec
// does not check for meaning.
func validateJobBounds(s *api.JobSpec) error {
	checks := []error{
		checkLen("capability", s.Capability, api.MaxCapabilityBytes),
		checkLen("config", s.Config, api.MaxConfigBytes),
		checkLen("affinity", s.Affinity, api.MaxAffinityBytes),
		checkLen("idempotency_key", s.IdempotencyKey, api.MaxKeyBytes),
		checkCount("inputs", len(s.Inputs), api.MaxDigests),
		checkCount("outputs", len(s.Outputs), api.MaxOutputGlobs),
	}
	if r := s.Resources; r != nil {
		checks = append(checks,
			checkLen("resources.gpu_model", r.GPUModel, api.MaxDeviceNameBytes),
			checkLen("resources.compute_capability", r.ComputeCapability, api.MaxDeviceFieldBytes))
	}
	if t := s.Target; t != nil {
		checks = append(checks, checkLen("target.kind", t.Kind, api.MaxIDBytes))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateExecBounds bounds the exec executor's config: command, dir,
// args and env.
func validateExecBounds(c *api.ExecConfig) error {
	if err := checkLen("config.command", c.Command, api.MaxCommandBytes); err != nil {
		return err
	}
	if err := checkLen("config.dir", c.Dir, api.MaxPathBytes); err != nil {
		return err
	}
	if err := checkStrings("config.args", c.Args, api.MaxArgs, api.MaxArgBytes); err != nil {
		return err
	}
	return checkStringMap("config.env", c.Env, api.MaxEnv, api.MaxEnvKeyBytes, api.MaxEnvValueBytes)
}

// query is a route's parsed query string: each parameter it takes, at
// most once.
type query map[string]string

// queryOf parses the query string of a route that takes the named
// parameters, and refuses (400 invalid_argument) what would otherwise be
// dropped or picked silently: a query that does not parse, a parameter
// the route does not take, and one given more than once, even with the
// same value. An empty value is the parameter's default.
func queryOf(r *http.Request, names ...string) (query, error) {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalidf("the query string does not parse: %s", firstLine(err.Error(), 128))
	}
	q := make(query, len(vals))
	for name, vs := range vals {
		if !slices.Contains(names, name) {
			return nil, invalidf("unknown query parameter %q; this route takes %s", firstLine(name, 64), strings.Join(names, ", "))
		}
		if len(vs) > 1 {
			return nil, invalidf("query parameter %s is given %d times; give it once", name, len(vs))
		}
		q[name] = vs[0]
	}
	return q, nil
}

// firstLine is s cut at its first line end and at most n bytes, for a
// message that quotes what a caller sent.
func firstLine(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
