// Package httpapi serves the coordinator's HTTP+JSON protocol: the route
// table, authentication and authorisation per route, strict request
// decoding, and the single mapping from internal errors to the protocol's
// error codes.
package httpapi
