package fabric

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultSysfs is where the kernel lists RDMA adapters.
const DefaultSysfs = "/sys/class/infiniband"

// Link layers a port reports.
const (
	LinkInfiniBand = "InfiniBand"
	LinkEthernet   = "Ethernet" // RoCE
)

// maxAdapters and maxPorts bound what one host's listing is read for: a
// sysfs tree larger than any real host is not read to its end.
const (
	maxAdapters = 64
	maxPorts    = 16
)

// Adapter is one RDMA adapter (an HCA, or a NIC doing RoCE).
type Adapter struct {
	Name string
	// NUMANode is the node the adapter's PCI device hangs off; -1 when
	// the kernel does not say.
	NUMANode int
	Ports    []Port
}

// Port is one port of an adapter.
type Port struct {
	Num       int
	Active    bool   // state ACTIVE
	LinkLayer string // LinkInfiniBand or LinkEthernet
	Rate      string // as the kernel words it, e.g. "400 Gb/sec (4X NDR)"
}

// ActivePorts are the adapter's ports that are up.
func (a Adapter) ActivePorts() []Port {
	var up []Port
	for _, p := range a.Ports {
		if p.Active {
			up = append(up, p)
		}
	}
	return up
}

// Discover lists the adapters under root (DefaultSysfs when empty), by
// name. A host with no RDMA stack has no such directory: that is no
// adapters, not an error. An adapter whose attributes cannot be read is
// listed with what could be.
func Discover(root string) ([]Adapter, error) {
	if root == "" {
		root = DefaultSysfs
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fabric: %w", err)
	}
	var out []Adapter
	for _, e := range entries {
		if len(out) == maxAdapters {
			break
		}
		dir := filepath.Join(root, e.Name())
		out = append(out, Adapter{Name: e.Name(), NUMANode: numaNode(dir), Ports: ports(dir)})
	}
	slices.SortFunc(out, func(a, b Adapter) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// numaNode reads the adapter's device/numa_node (-1 when absent).
func numaNode(dir string) int {
	n, err := strconv.Atoi(readAttr(filepath.Join(dir, "device", "numa_node")))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// ports reads the adapter's ports/<n> directories.
func ports(dir string) []Port {
	entries, err := os.ReadDir(filepath.Join(dir, "ports"))
	if err != nil {
		return nil
	}
	var out []Port
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 1 || len(out) == maxPorts {
			continue
		}
		p := filepath.Join(dir, "ports", e.Name())
		// state reads e.g. "4: ACTIVE"; link_layer "InfiniBand" or
		// "Ethernet".
		state := readAttr(filepath.Join(p, "state"))
		out = append(out, Port{
			Num:       n,
			Active:    strings.HasSuffix(state, "ACTIVE"),
			LinkLayer: readAttr(filepath.Join(p, "link_layer")),
			Rate:      readAttr(filepath.Join(p, "rate")),
		})
	}
	slices.SortFunc(out, func(a, b Port) int { return a.Num - b.Num })
	return out
}

// maxAttrBytes bounds one attribute read.
const maxAttrBytes = 256

// readAttr reads one sysfs attribute, trimmed ("" when unreadable).
func readAttr(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, maxAttrBytes)
	n, _ := f.Read(buf)
	return strings.TrimSpace(string(buf[:n]))
}
