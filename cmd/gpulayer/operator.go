package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func operatorCmd() *cobra.Command {
	raft := group("raft", "Raft membership", "  gpulayer operator raft list-peers",
		raftListPeersCmd(), raftAddPeerCmd(), raftRemovePeerCmd())
	snapshot := group("snapshot", "backups of the replicated state", "  gpulayer operator snapshot save backup.snap",
		snapshotSaveCmd(), snapshotRestoreCmd())
	return group("operator", "cluster administration (admin)",
		"  gpulayer operator raft list-peers\n  gpulayer operator snapshot save backup.snap\n  gpulayer operator gc", raft, snapshot, gcCmd())
}

// gcCmd removes the finished jobs due under the retention now.
func gcCmd() *cobra.Command {
	var olderThan time.Duration
	cmd := clientLeaf(&cobra.Command{
		Use:   "gc [flags]",
		Short: "remove finished jobs past the retention now (the leader also does it every few minutes)",
		Long: "gc removes, with their tasks, output and idempotency keys, the finished jobs older than the\n" +
			"coordinators' retention threshold (or --older-than) and those beyond the number kept.\n" +
			"Afterwards they answer 404.",
		Example: "  gpulayer operator gc\n  gpulayer operator gc --older-than 0s   # every finished job",
		Args:    noArgs,
	}, nil, func(cmd *cobra.Command, c *client.Client, _ []string, _ *outputFlags) error {
		var age *time.Duration
		if cmd.Flags().Changed("older-than") {
			if olderThan < 0 {
				return usagef("--older-than must not be negative")
			}
			age = &olderThan
		}
		n, err := c.CollectGarbage(cmd.Context(), age)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%d finished jobs removed\n", n)
		return nil
	})
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "remove finished jobs older than this instead of the retention threshold")
	return cmd
}

// peerCmd is a Raft membership command: it prints the servers as the
// command left them.
func peerCmd(cmd *cobra.Command, call func(context.Context, *client.Client, []string) ([]api.Peer, error)) *cobra.Command {
	return readCmd(cmd, false, call, func(w io.Writer, peers []api.Peer, _ bool) {
		row(w, "NODE", "RAFT ADDRESS", "SUFFRAGE", "LEADER")
		for _, p := range peers {
			row(w, p.ID, p.Address, p.Suffrage, fmt.Sprint(p.Leader))
		}
	})
}

func raftListPeersCmd() *cobra.Command {
	return peerCmd(&cobra.Command{
		Use:     "list-peers [flags]",
		Short:   "list the Raft servers",
		Example: "  gpulayer operator raft list-peers\n  gpulayer operator raft list-peers -o json",
		Args:    noArgs,
	}, func(ctx context.Context, c *client.Client, _ []string) ([]api.Peer, error) {
		return c.Peers(ctx)
	})
}

func raftAddPeerCmd() *cobra.Command {
	var id, addr string
	cmd := peerCmd(&cobra.Command{
		Use:     "add-peer [flags] --node-id ID --raft-addr HOST:PORT",
		Short:   "add a server",
		Example: "  gpulayer operator raft add-peer --node-id c4 --raft-addr 10.0.0.14:7071",
		Args:    noArgs,
	}, func(ctx context.Context, c *client.Client, _ []string) ([]api.Peer, error) {
		if id == "" || addr == "" {
			return nil, usagef("--node-id and --raft-addr are required")
		}
		return c.AddPeer(ctx, id, addr)
	})
	cmd.Flags().StringVar(&id, "node-id", "", "the new server's node id (required)")
	cmd.Flags().StringVar(&addr, "raft-addr", "", "the new server's advertised Raft address (required)")
	return cmd
}

func raftRemovePeerCmd() *cobra.Command {
	return peerCmd(&cobra.Command{
		Use:     "remove-peer [flags] NODE_ID",
		Short:   "remove a server",
		Example: "  gpulayer operator raft remove-peer c4",
		Args:    exactArgs(1, "node id"),
	}, func(ctx context.Context, c *client.Client, args []string) ([]api.Peer, error) {
		return c.RemovePeer(ctx, args[0])
	})
}

func snapshotSaveCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "save [flags] FILE",
		Short:   "write a snapshot to FILE",
		Example: "  gpulayer operator snapshot save backup.snap --addr https://c1:7070",
		Args:    exactArgs(1, "output file"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		path := args[0]
		tmp := path + ".partial"
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		n, err := c.SaveSnapshot(cmd.Context(), f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		fmt.Fprintf(humanOut, "saved %d bytes to %s (it holds credential hashes: keep it private)\n", n, path)
		return nil
	})
}

func snapshotRestoreCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "restore [flags] FILE",
		Short:   "replace the whole state with FILE",
		Example: "  gpulayer operator snapshot restore backup.snap",
		Args:    exactArgs(1, "snapshot file"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		if err := c.RestoreSnapshot(cmd.Context(), f); err != nil {
			return err
		}
		fmt.Fprintf(humanOut, "restored the cluster's state from %s\n", args[0])
		return nil
	})
}
