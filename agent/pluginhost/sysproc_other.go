//go:build !linux

package pluginhost

import "syscall"

// pluginSysProcAttr: only Linux has a parent-death signal.
func pluginSysProcAttr() *syscall.SysProcAttr { return nil }
