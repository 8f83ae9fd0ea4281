// Package api holds the GpuLayer wire types shared by the coordinator, the
// agent, the Go client and plugin authors: request and response bodies, the
// error envelope and its codes, and the credential prefixes.
//
// It depends on the standard library only, so anything may import it.
package api
