package httpapi

import (
	"github.com/gpulayer/gpulayer/sdk/api"
)

// validateContainerConfig checks the config of a job for the container
// executor (docs/containers.md) before anything is proposed: the shape
// (unknown fields refused), the bounds the exec config has, the fields
// themselves (api.ContainerConfig.Check), and that an image_artifact is
// one of the job's inputs, staged at its default path where the executor
// looks for it. The executor checks the config again on the worker.
func validateContainerConfig(s *api.JobSpec) error {
	var c api.ContainerConfig
	if err := decodeStrict(s.Config, &c, false); err != nil {
		return invalidf("config for the container executor: %v", err)
	}
	if err := checkLen("config.image", c.Image, api.MaxImageRefBytes); err != nil {
		return err
	}
	if err := checkLen("config.workdir", c.WorkDir, api.MaxPathBytes); err != nil {
		return err
	}
	if err := checkStrings("config.command", c.Command, api.MaxArgs, api.MaxArgBytes); err != nil {
		return err
	}
	if err := checkStrings("config.args", c.Args, api.MaxArgs, api.MaxArgBytes); err != nil {
		return err
	}
	if err := checkStringMap("config.env", c.Env, api.MaxEnv, api.MaxEnvKeyBytes, api.MaxEnvValueBytes); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return invalidf("%v", err)
	}
	if c.ImageArtifact == "" {
		return nil
	}
	for _, in := range s.Inputs {
		if in.SHA256 == c.ImageDigest() && in.StagePath() == api.DefaultInputDir+"/"+in.SHA256 {
			return nil
		}
	}
	return invalidf("config.image_artifact %s is not among the job's inputs at its default path (inputs: [{\"sha256\": ...}] with no path)", shortQuote(c.ImageArtifact))
}
