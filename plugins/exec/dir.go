package exec

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// errDirOutside is wrapped by workingDir's error for a dir that, symbolic
// links resolved, is not inside the task's work dir.
var errDirOutside = errors.New("is outside the task's directory")

// workingDir resolves the config's dir against the task's work dir and
// checks that the result, symbolic links resolved, is the work dir or
// inside it. The submit-time rule (api.CheckExecDir) is applied again
// here: the plugin does not trust that the coordinator ran it. An empty
// work dir leaves the process in the plugin's own directory, which only a
// dir-less config may ask for.
func workingDir(cfgDir, workDir string) (string, error) {
	if err := api.CheckExecDir(cfgDir); err != nil {
		return "", fmt.Errorf("%w: exec config: dir %q %v", executor.ErrInvalidConfig, cfgDir, err)
	}
	if workDir == "" {
		if cfgDir != "" {
			return "", fmt.Errorf("%w: exec config: dir %q given but the task has no work dir", executor.ErrInvalidConfig, cfgDir)
		}
		return "", nil
	}
	root, err := filepath.EvalSymlinks(workDir)
	if err != nil {
		return "", fmt.Errorf("task work dir: %w", err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(cfgDir)))
	if err != nil {
		return "", fmt.Errorf("working dir %q: %w", cfgDir, err)
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: exec config: dir %q resolves to %s, which %w", executor.ErrInvalidConfig, cfgDir, dir, errDirOutside)
	}
	return dir, nil
}
