package plugininit

import (
	"fmt"
	"regexp"
)

// namePattern is the rule every executor name follows: the coordinator
// refuses a job spec or worker registration with another
// (coordinator/httpapi), and the agent's plugin host looks nothing else
// up in its plugin directory (agent/pluginhost).
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidateName returns an error wrapping ErrInvalidName unless name can
// name an executor.
func ValidateName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%w %q: use 1 to 64 lowercase letters, digits, '-' or '_', starting with a letter or digit", ErrInvalidName, name)
	}
	return nil
}
