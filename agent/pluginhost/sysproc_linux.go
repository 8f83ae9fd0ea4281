package pluginhost

import "syscall"

// pluginSysProcAttr has the kernel send the plugin process SIGTERM when
// the agent dies without closing it (SIGKILL, a crash): a built-in plugin
// then kills its tasks' process groups and exits (plugins.ServeBuiltin),
// and any Go plugin exits, so that no task keeps running, holding its
// GPUs, while the coordinator hands it out again. (The signal is tied to
// the thread that started the process, and the Go runtime ends a thread
// only when a goroutine exits locked to it, which nothing that launches
// plugins does.)
func pluginSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
