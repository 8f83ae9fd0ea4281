package agent

import (
	"os"
	"regexp"
	"strings"
)

// An agent given no worker id registers under its host's name, so that
// `worker list` names machines people know. The name is lowercased and cut
// at its first dot (gpu-7.example.com is gpu-7); one the id grammar
// refuses, or a reserved id, leaves the choice to the coordinator as
// before ("w" and random characters), and so does a name another worker
// holds already (firstCredential registers again without it).

// workerIDPattern is the contract's id grammar (PROTOCOL.md; the
// coordinator's validateID checks the same).
var workerIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// reservedIDs are the ids no worker may take.
var reservedIDs = map[string]bool{"admin": true, "system": true, "internal": true, "self": true}

// hostWorkerID makes a worker id of hostname: "" when it makes none.
func hostWorkerID(hostname string) string {
	id, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(hostname)), ".")
	if reservedIDs[id] || !workerIDPattern.MatchString(id) {
		return ""
	}
	return id
}

// defaultWorkerID is the id an agent configured with none asks for first.
func (a *Agent) defaultWorkerID() string {
	name := a.cfg.Hostname
	if name == "" {
		name, _ = os.Hostname()
	}
	return hostWorkerID(name)
}
