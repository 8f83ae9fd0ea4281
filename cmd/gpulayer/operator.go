package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func printPeers(peers []api.Peer) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tRAFT ADDRESS\tSUFFRAGE\tLEADER")
	for _, p := range peers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", p.ID, p.Address, p.Suffrage, p.Leader)
	}
	return tw.Flush()
}

func raftListPeers(ctx context.Context, args []string) error {
	fs := newClientCmd("operator raft list-peers")
	c, _, err := fs.connect(args, -1, "")
	if err != nil {
		return err
	}
	peers, err := c.Peers(ctx)
	if err != nil {
		return err
	}
	return printPeers(peers)
}

func raftAddPeer(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("operator raft add-peer", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	id := fs.String("node-id", "", "the new server's node id (required)")
	addr := fs.String("raft-addr", "", "the new server's advertised Raft address (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *id == "" || *addr == "" {
		return fmt.Errorf("--node-id and --raft-addr are required")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	peers, err := c.AddPeer(ctx, *id, *addr)
	if err != nil {
		return err
	}
	return printPeers(peers)
}

func raftRemovePeer(ctx context.Context, args []string) error {
	fs := newClientCmd("operator raft remove-peer")
	c, pos, err := fs.connect(args, 1, "node id")
	if err != nil {
		return err
	}
	id := pos[0]
	peers, err := c.RemovePeer(ctx, id)
	if err != nil {
		return err
	}
	return printPeers(peers)
}

func snapshotSave(ctx context.Context, args []string) error {
	fs := newClientCmd("operator snapshot save")
	c, pos, err := fs.connect(args, 1, "output file")
	if err != nil {
		return err
	}
	path := pos[0]
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := c.SaveSnapshot(ctx, f)
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
	fmt.Printf("saved %d bytes to %s (it holds credential hashes: keep it private)\n", n, path)
	return nil
}

func snapshotRestore(ctx context.Context, args []string) error {
	fs := newClientCmd("operator snapshot restore")
	c, pos, err := fs.connect(args, 1, "snapshot file")
	if err != nil {
		return err
	}
	path := pos[0]
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := c.RestoreSnapshot(ctx, f); err != nil {
		return err
	}
	fmt.Printf("restored the cluster's state from %s\n", path)
	return nil
}
