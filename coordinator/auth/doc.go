// Package auth mints, parses and verifies GpuLayer credentials and describes
// the principal a request acts as.
//
// A token is "<prefix>_<id>_<secret>": the id locates the stored record in
// O(1) and the secret carries 256 random bits. Only the SHA-256 of the secret
// is ever stored; verification compares hashes in constant time.
package auth
