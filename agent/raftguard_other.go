//go:build !linux

package agent

import "context"

// guardRaft does nothing outside Linux (no netfilter owner match).
func (a *Agent) guardRaft(context.Context) func() { return func() {} }
