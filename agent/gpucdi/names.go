package gpucdi

import (
	"strings"

	"tags.cncf.io/container-device-interface/pkg/parser"
)

// Vendor and Class make the spec's kind, Kind.
const (
	Vendor = "gpulayer.io"
	Class  = "gpu"
	Kind   = Vendor + "/" + Class
)

// Qualified is the CDI name of the device called name in this kind:
// gpulayer.io/gpu=<name>.
func Qualified(name string) string { return parser.QualifiedName(Vendor, Class, name) }

// ShareName is the device name of the share attempt holds of the GPU gpu:
// <gpu>-share-<attempt>, with every character CDI does not take in a
// device name replaced by '_'.
func ShareName(gpu, attempt string) string {
	return cleanName(gpu + "-share-" + attempt)
}

// cleanName replaces the characters a CDI device name cannot hold
// (anything but letters, digits, '-', '_', '.' and ':') with '_'.
func cleanName(s string) string {
	return strings.Map(func(r rune) rune {
		if parser.IsAlphaNumeric(r) || strings.ContainsRune("-_.:", r) {
			return r
		}
		return '_'
	}, s)
}
