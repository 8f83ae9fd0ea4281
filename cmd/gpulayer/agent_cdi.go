package main

import (
	"path/filepath"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/plugins/container"
)

// agentCDIDir is the agent's CDI spec directory from --cdi-dir: as
// given; "none" for none; unset, where CDI consumers look, except for
// fake GPUs, whose spec stays in the agent's data dir (the container
// executor is told where it is).
func agentCDIDir(flag, fakeGPUs, dataDir string) string {
	switch {
	case flag == "none":
		return ""
	case flag != "":
		return flag
	case fakeGPUs != "" && fakeGPUs != devices.FakeReal:
		return filepath.Join(dataDir, "cdi")
	}
	return container.DefaultCDIDir
}
