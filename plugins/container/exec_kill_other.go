//go:build !unix

package container

// killExec cannot reach an exec's process here: it ends when its
// container does.
func killExec(engine, string) {}
