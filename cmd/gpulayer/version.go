package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the release, set when building:
// go build -ldflags "-X main.version=v1.2.3" ./cmd/gpulayer
var version = "dev"

// commit is the source revision when the go command could not stamp it
// (a build with -buildvcs=false): -ldflags "-X main.commit=$(git rev-parse HEAD)".
var commit = "unknown"

// buildVersion is what `gpulayer version` reports.
type buildVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

// currentVersion reads the commit the go command stamped into the binary.
func currentVersion() buildVersion {
	v := buildVersion{Version: version, Commit: commit, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	modified, stamped := false, false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
			stamped = true
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && stamped {
		v.Commit += "-modified"
	}
	return v
}

func versionCmd() *cobra.Command {
	var out outputFlags
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "print the version, commit and Go version",
		Example: "  gpulayer version\n  gpulayer version -o json",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			v := currentVersion()
			return out.print(v, func(w io.Writer, _ bool) {
				fmt.Fprintf(w, "version:\t%s\ncommit:\t%s\ngo:\t%s\n", v.Version, v.Commit, v.Go)
			})
		},
	}
	out.register(cmd.Flags())
	return cmd
}
