// Package client is the Go client of the GpuLayer protocol, used by the CLI,
// the agent and programs that submit jobs. It takes several coordinator
// addresses, follows not_leader redirects, and moves to another address
// when one cannot be reached or has no leader.
package client
