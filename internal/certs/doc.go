// Package certs makes the certificates coordinators use to recognise each
// other: a cluster CA (ECDSA P-256), server certificates that carry the
// cluster's server name, and client certificates that carry its client
// name. `gpulayer tls` is its command line.
//
// Names follow one scheme: a coordinator of cluster C is
// "server.C.gpulayer", a client of it is "client.C.gpulayer". Peers verify
// that name, not the address they dialled, so a certificate for one
// cluster, or a client certificate, never passes for a coordinator.
package certs
