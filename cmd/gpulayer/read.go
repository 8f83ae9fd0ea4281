package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// readCmd completes cmd as a read command: the client flags, -o, --watch
// when watchable, and a run that fetches the value and prints it as JSON
// or through table.
func readCmd[T any](cmd *cobra.Command, watchable bool, fetch func(context.Context, *client.Client, []string) (T, error), table func(w io.Writer, v T, wide bool)) *cobra.Command {
	var watch watchFlags
	if watchable {
		watch.register(cmd.Flags())
	}
	return clientLeaf(cmd, &outputFlags{}, func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		return watch.run(cmd.Context(), out, func(ctx context.Context) error {
			v, err := fetch(ctx, c, args)
			if err != nil {
				return err
			}
			return out.print(v, func(w io.Writer, wide bool) { table(w, v, wide) })
		})
	})
}
