package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// baseEnv keeps the variables of environ a task inherits
// (executor.Inheritable): a task's environment is otherwise the config's
// env and Task.Env, so nothing else of the plugin's (or the agent's)
// environment, credentials included, reaches a task.
func baseEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if executor.Inheritable(name) {
			out = append(out, kv)
		}
	}
	return out
}

// buildEnv returns base with layers applied in order, later layers
// winning. Overridden base entries are removed, not duplicated, so the
// child sees exactly one value per name.
func buildEnv(base []string, layers ...map[string]string) []string {
	override := make(map[string]string)
	for _, l := range layers {
		for k, v := range l {
			override[k] = v
		}
	}
	env := make([]string, 0, len(base)+len(override))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := override[name]; !ok {
			env = append(env, kv)
		}
	}
	names := make([]string, 0, len(override))
	for k := range override {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		env = append(env, k+"="+override[k])
	}
	return env
}

// lookupEnv returns name's value in env.
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// errNotFound is returned by lookPath when no executable matches.
var errNotFound = errors.New("executable file not found in $PATH")

// lookPath finds file in pathList (the task's PATH) unless it contains a
// slash. Relative PATH entries are ignored, as os/exec does by default,
// so a task never runs a program from an unexpected directory.
func lookPath(file, pathList string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, file)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	return "", executor.Permanent(fmt.Errorf("%q: %w", file, errNotFound))
}

// homeDefaults points HOME and TMPDIR at the task's work dir, for hosts
// that do not set them in Task.Env (the GpuLayer agent does). The config's
// env may override them; Task.Env wins over both.
func homeDefaults(workDir string) map[string]string {
	if workDir == "" {
		return nil
	}
	return map[string]string{"HOME": workDir, "TMPDIR": workDir}
}
