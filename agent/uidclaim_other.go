//go:build !unix

package agent

// claimTaskUIDs: tasks switch uid on Unix only.
func claimTaskUIDs(string, uint32, int) (func(), error) { return func() {}, nil }
