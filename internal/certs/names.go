package certs

import (
	"errors"
	"fmt"
	"regexp"
)

// DefaultCluster is the cluster name when none is given.
const DefaultCluster = "global"

// ErrClusterName refuses a cluster name that is not one DNS label.
var ErrClusterName = errors.New("cluster name must be 1-63 lower-case letters, digits or '-', starting and ending with a letter or digit")

var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidateCluster checks that a cluster name can be part of a DNS name.
func ValidateCluster(cluster string) error {
	if !labelRE.MatchString(cluster) {
		return fmt.Errorf("%w: got %q", ErrClusterName, cluster)
	}
	return nil
}

// ServerName is the DNS name every coordinator certificate of cluster
// carries, and the name peers verify.
func ServerName(cluster string) string { return "server." + cluster + ".gpulayer" }

// ClientName is the DNS name a client certificate of cluster carries.
func ClientName(cluster string) string { return "client." + cluster + ".gpulayer" }
