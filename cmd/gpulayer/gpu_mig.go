package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// gpuMIGCmd asks for a GPU's MIG layout, or drops the request (--clear).
func gpuMIGCmd() *cobra.Command {
	var clear bool
	cmd := clientLeaf(&cobra.Command{
		Use:   "mig [flags] WORKER GPU-UUID LAYOUT|whole",
		Short: "repartition a GPU into MIG devices (LAYOUT: profiles joined by commas; whole: MIG off); its agent drains it first (audited)",
		Example: "  gpulayer gpu mig gpu-node-7 GPU-5f1c… 3g.40gb,3g.40gb\n  gpulayer gpu mig gpu-node-7 GPU-5f1c… whole\n" +
			"  gpulayer gpu mig gpu-node-7 GPU-5f1c… --clear   # give up a failed repartition, take the GPU as it is",
		Args: func(cmd *cobra.Command, args []string) error {
			if clear {
				return exactArgs(2, "worker id and GPU uuid, with --clear")(cmd, args)
			}
			return exactArgs(3, "worker id, GPU uuid and layout")(cmd, args)
		},
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		var w api.Worker
		var err error
		if clear {
			w, err = c.ClearMIGLayout(cmd.Context(), args[0], args[1])
		} else {
			layout, perr := parseMIGLayout(args[2])
			if perr != nil {
				return perr
			}
			w, err = c.SetMIGLayout(cmd.Context(), args[0], args[1], layout)
		}
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(w)
		}
		if clear {
			fmt.Fprintf(humanOut, "worker %s: GPU %s MIG layout request cleared\n", w.WorkerID, args[1])
			return nil
		}
		fmt.Fprintf(humanOut, "worker %s: GPU %s MIG layout %s pending: the agent drains the GPU, then repartitions it (gpulayer gpu list shows it)\n", w.WorkerID, args[1], args[2])
		return nil
	})
	cmd.Flags().BoolVar(&clear, "clear", false, "drop the GPU's MIG layout request (a failed one) and take the GPU as it is")
	return cmd
}

// parseMIGLayout reads "3g.40gb,3g.40gb" (or "whole": none).
func parseMIGLayout(s string) ([]string, error) {
	if s == "whole" {
		return []string{}, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !api.ValidMIGProfile(p) {
			return nil, usagef("%q is not a MIG profile (as 3g.40gb); give profiles joined by commas, or whole", p)
		}
		out = append(out, p)
	}
	return out, nil
}
