package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/internal/plugininit"
	"github.com/gpulayer/gpulayer/plugins"
)

// pluginInitOptions are the flags of `gpulayer plugin init`.
type pluginInitOptions struct {
	dir, module, sdk string
}

// pluginInitCmd writes a new executor plugin project, for authors working
// outside this repository. "init" is therefore not a built-in executor's
// name (TestPluginCommandRouting).
func pluginInitCmd() *cobra.Command {
	var o pluginInitOptions
	cmd := &cobra.Command{
		Use:   "init NAME",
		Short: "write a new executor plugin project (a Go module) to build outside this repository",
		Long: `plugin init writes a Go module for an executor plugin called NAME: a small
working executor, its conformance test (sdk/executor/executortest), a
Makefile that builds gpulayer-executor-NAME (the file name the agent's
--plugin-dir loader looks for), a README and a .gitignore.

GpuLayer's module is not published yet, so go.mod replaces it with a local
checkout: --sdk DIR, else the source this gpulayer binary was built from,
else the checkout holding the current directory. When none is known the
replace line is written commented out, and plugin init says so.

NAME is 1 to 64 lowercase letters, digits, '-' or '_'. The directory
(--dir, default ./NAME) must be empty or absent: nothing is overwritten.`,
		Example: `  gpulayer plugin init slurm-step
  gpulayer plugin init demo --dir ~/src/demo --module git.example.com/me/demo --sdk ~/src/gpulayer`,
		Args: exactArgs(1, "plugin name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPluginInit(cmd.OutOrStdout(), args[0], o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.dir, "dir", "", "directory to write the project into (default ./NAME)")
	fs.StringVar(&o.module, "module", "", "the project's module path (default example.com/NAME)")
	fs.StringVar(&o.sdk, "sdk", "", "a gpulayer checkout for go.mod to build against (default: found from this binary or the current directory)")
	// A project's directory and module path are this command's alone: no
	// GPULAYER_DIR or GPULAYER_MODULE should set them behind one's back.
	for _, name := range []string{"dir", "module"} {
		_ = fs.SetAnnotation(name, noEnvAnnotation, []string{"true"})
	}
	return cmd
}

func runPluginInit(w io.Writer, name string, o pluginInitOptions) error {
	if err := plugininit.ValidateName(name); err != nil {
		return usageError{err}
	}
	if slices.Contains(plugins.Names(), name) {
		return usagef("%q is a built-in executor, which wins over a plugin of the same name: choose another name", name)
	}
	if o.dir == "" {
		o.dir = name
	}
	p := plugininit.Params{Name: name, Module: o.module}
	how, err := o.locateSDK(&p)
	if err != nil {
		return err
	}
	proj, err := plugininit.Write(o.dir, p)
	switch {
	case errors.Is(err, plugininit.ErrInvalidModule):
		return usageError{err}
	case err != nil:
		return err
	}
	printNextSteps(w, proj, p, how)
	return nil
}

// locateSDK fills p's SDK wiring: --sdk, else a checkout Locate finds,
// else a published version of this binary. It returns how the checkout
// was found.
func (o pluginInitOptions) locateSDK(p *plugininit.Params) (string, error) {
	if o.sdk != "" {
		abs, err := filepath.Abs(o.sdk)
		if err != nil {
			return "", err
		}
		if !plugininit.IsCheckout(abs) {
			return "", usagef("--sdk %s is not a gpulayer checkout: it needs a go.mod declaring %s and sdk/executor", o.sdk, plugininit.SDKModule)
		}
		p.SDKDir = abs
		return "--sdk", nil
	}
	cwd, _ := os.Getwd()
	dir, how := plugininit.Locate(cwd)
	p.SDKDir = dir
	p.SDKVersion = plugininit.PublishedVersion()
	return how, nil
}

// printNextSteps tells the author what was written and what to run next.
func printNextSteps(w io.Writer, proj plugininit.Project, p plugininit.Params, how string) {
	fmt.Fprintf(w, "Wrote the %q executor plugin to %s:\n  %s\n\n", p.Name, proj.Dir, strings.Join(proj.Files, " "))
	switch proj.Wiring {
	case plugininit.WiredToCheckout:
		fmt.Fprintf(w, "go.mod builds against the gpulayer checkout in %s (%s), as the module is not published yet.\n\n", p.SDKDir, how)
	case plugininit.WiredToVersion:
		fmt.Fprintf(w, "go.mod requires %s %s.\n\n", plugininit.SDKModule, p.SDKVersion)
	default:
		fmt.Fprintf(w, "No gpulayer checkout was found, and the module is not published yet: go.mod's\n"+
			"replace line is commented out. Point it at a checkout (or run plugin init again\n"+
			"with --sdk DIR) before go mod tidy.\n\n")
	}
	fmt.Fprintf(w, `Next:
  cd %s
  go mod tidy
  go test ./...                 # executortest: the contract the agent relies on
  go build -o plugins/%s .
  gpulayer agent run --plugin-dir "$PWD/plugins" ...   # or: gpulayer dev --plugin-dir "$PWD/plugins"
  gpulayer job submit --executor %s --config '{"lines":["hello from ${GPULAYER_TASK_ID}"]}' --wait
`, shellQuote(proj.Dir), proj.Binary, p.Name)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
