package fabric

// Capability names the agent adds for the fabrics it found up: a job
// that needs one asks for it as its `capability`.
const (
	CapInfiniBand = "infiniband"
	CapRoCE       = "roce"
)

// Capabilities are the capabilities adapters with a port up give a
// host, in a fixed order.
func Capabilities(adapters []Adapter) []string {
	var ib, roce bool
	for _, a := range adapters {
		for _, p := range a.ActivePorts() {
			switch p.LinkLayer {
			case LinkInfiniBand:
				ib = true
			case LinkEthernet:
				roce = true
			}
		}
	}
	var caps []string
	if ib {
		caps = append(caps, CapInfiniBand)
	}
	if roce {
		caps = append(caps, CapRoCE)
	}
	return caps
}
