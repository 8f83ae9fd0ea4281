package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// A cluster that lost its quorum for good (a majority of its
// coordinators gone, or a member added at an address that never answers)
// elects no leader and takes no write, and no API call can change its
// configuration, which takes a leader. The way back is the operator's,
// on disk, as with Consul and Nomad: with every remaining coordinator
// stopped, write into each one's data dir a peers.json naming the
// servers to go on with (hashicorp/raft's format, read by
// raft.ReadConfigJSON):
//
//	[{"id": "c1", "address": "10.0.0.1:7000", "non_voter": false}]
//
// and start them. At start, before Raft runs, the node recovers its
// configuration from the file (raft.RecoverCluster: its log and snapshot
// are kept, the configuration replaced) and renames the file to
// peers.json.recovered, so that a later restart does not recover again.
// A file that does not parse, names an address Raft cannot dial
// (CheckPeer) or does not name this node as a voter is refused, Open
// fails and the file stays. docs/operations.md walks through it.

// PeersFile is the name, in a node's data dir, of a configuration to
// recover from; recoveredSuffix is added to it once recovered.
const (
	PeersFile       = "peers.json"
	recoveredSuffix = ".recovered"
)

// ErrBadPeers is a peers.json that cannot be recovered from.
var ErrBadPeers = errors.New("cluster: peers.json cannot be used")

// recoverPeers recovers the configuration from dataDir's peers.json, if
// there is one, over the stores Raft is about to run on.
func recoverPeers(dataDir string, rc *raft.Config, f raft.FSM, stores Stores, trans raft.Transport) error {
	path := filepath.Join(dataDir, PeersFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	conf, err := raft.ReadConfigJSON(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadPeers, path, err)
	}
	if err := checkRecovery(conf, rc.LocalID); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadPeers, path, err)
	}
	if err := raft.RecoverCluster(rc, f, stores.Log, stores.Stable, stores.Snapshots, trans, conf); err != nil {
		return fmt.Errorf("%w: %s: recover: %v", ErrBadPeers, path, err)
	}
	if err := os.Rename(path, path+recoveredSuffix); err != nil {
		return fmt.Errorf("cluster: recovered from %s, but could not move it aside (remove it before the next start): %w", path, err)
	}
	return nil
}

// checkRecovery checks a configuration to recover to: every server's id
// and address as a peer's, and this node among the voters.
func checkRecovery(conf raft.Configuration, self raft.ServerID) error {
	voter := false
	for _, s := range conf.Servers {
		if err := CheckPeer(string(s.ID), string(s.Address)); err != nil {
			return err
		}
		voter = voter || (s.ID == self && s.Suffrage == raft.Voter)
	}
	if !voter {
		return fmt.Errorf("this node, %s, is not among its voters", self)
	}
	return nil
}
