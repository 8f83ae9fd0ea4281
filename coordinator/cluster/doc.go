// Package cluster runs the coordinator's Raft node: it opens the log,
// stable and snapshot stores in the data dir, bootstraps a new cluster,
// and proposes commands through a group-commit batcher that packs
// concurrent writes into few log entries.
package cluster
