package exec

import "strings"

// Task cgroups of several agents on one host can share a parent (on
// cgroup v2 every one is below /sys/fs/cgroup/gpulayer; on v1 when the
// agents run in the same cgroup). Each is named for the agent it belongs
// to (executor.Sandbox.Owner) as "<owner>.<attempt id>", so that an
// executor clearing what its own agent's earlier run left never removes
// another agent's cgroup in the moment between making it and putting
// the task in it.

// ownerSep separates the owner from the attempt id in a cgroup's name.
// Owners hold no '.' (executor.TaskSandbox refuses one).
const ownerSep = "."

// ownedName is the cgroup name of attempt id for owner: the id alone
// without an owner, as before owners.
func ownedName(owner, id string) string {
	if owner == "" {
		return id
	}
	return owner + ownerSep + id
}

// ownedBy reports whether the cgroup named name belongs to owner: it
// begins with owner and the separator, or, for no owner, it names no
// owner at all (holds no separator).
func ownedBy(name, owner string) bool {
	if owner == "" {
		return !strings.Contains(name, ownerSep)
	}
	return strings.HasPrefix(name, owner+ownerSep)
}
