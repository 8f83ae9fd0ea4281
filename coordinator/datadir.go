package coordinator

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
)

// Everything a coordinator keeps in its data dir is secret or sensitive:
// raft.db and the snapshots hold every credential hash, job spec and the
// audit log; bootstrap-credentials.json holds init's hashes; artifacts/
// holds uploaded inputs. The dir is 0700 and its files 0600, whatever
// was there before: a dir made 0755 by hand, or files restored from a
// backup with looser modes, are tightened once at start, before anything
// opens them. What the coordinator creates afterwards is created private
// (raft's snapshots through cluster's wrapper, artifacts by blob).

// secureDataDir creates dir (0700) if needed and tightens every mode under
// it, logging what it changed.
func secureDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("coordinator: data dir: %w", err)
	}
	changed, err := cluster.RestrictTree(dir)
	for _, p := range changed {
		log.Warn("tightened a data dir mode that others could read", "path", p)
	}
	if err != nil {
		return fmt.Errorf("coordinator: data dir: %w", err)
	}
	return nil
}
