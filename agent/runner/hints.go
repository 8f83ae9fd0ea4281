package runner

import (
	"encoding/json"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// addHints gives a task the agent's hints (the NCCL variables an operator
// enabled, Config.Hints): each is added unless the agent already set that
// variable or the job's own config sets it in its env, so a job that
// knows better (its own NCCL_IB_HCA) keeps its value. Task.Env wins over a
// job's env, so a hint must be left out rather than overridden there.
func addHints(env map[string]string, hints map[string]string, a api.Assignment) {
	if len(hints) == 0 {
		return
	}
	var cfg struct {
		Env map[string]string `json:"env"`
	}
	_ = json.Unmarshal(a.Config, &cfg) // an executor's config without an env object sets none
	for k, v := range hints {
		if _, set := env[k]; set {
			continue
		}
		if _, set := cfg.Env[k]; set {
			continue
		}
		env[k] = v
	}
}
