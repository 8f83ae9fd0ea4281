package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// raft's FileSnapshotStore makes its directories 0755 and its files
// (state.bin, meta.json) with the default 0666 less the umask: a snapshot,
// which holds every credential hash, the audit log and all job specs,
// would be readable by every local user. privateSnapshots wraps it so that
// the snapshots directory is 0700 and every snapshot, while it is written
// and once it is complete, is a 0700 directory of 0600 files.

const (
	privateDir  fs.FileMode = 0o700
	privateFile fs.FileMode = 0o600
)

type privateSnapshots struct {
	raft.SnapshotStore
	dir string // the store's snapshots directory
}

// newPrivateSnapshots opens a FileSnapshotStore in base and tightens what
// it holds already.
func newPrivateSnapshots(base string, retain int, logger hclog.Logger) (raft.SnapshotStore, error) {
	inner, err := raft.NewFileSnapshotStoreWithLogger(base, retain, logger)
	if err != nil {
		return nil, err
	}
	p := &privateSnapshots{SnapshotStore: inner, dir: filepath.Join(base, "snapshots")}
	if _, err := RestrictTree(p.dir); err != nil {
		return nil, err
	}
	return p, nil
}

// Create starts a snapshot and makes its directory and files private
// before any state is written to them.
func (p *privateSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := p.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	if _, err := RestrictTree(filepath.Join(p.dir, sink.ID()+".tmp")); err != nil {
		_ = sink.Cancel()
		return nil, err
	}
	return &privateSink{SnapshotSink: sink, dir: filepath.Join(p.dir, sink.ID())}, nil
}

// privateSink tightens the finished snapshot again (Close rewrites
// meta.json and renames the directory into place).
type privateSink struct {
	raft.SnapshotSink
	dir string
}

func (s *privateSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	_, err := RestrictTree(s.dir)
	return err
}

// RestrictTree makes dir and every directory under it 0700 and every file
// 0600 (a file that is already stricter keeps its mode), and returns the
// paths it changed. dir itself may be a symbolic link (a data dir on a
// mounted volume): the directory it names is restricted. Links below it
// are left alone, not followed. A dir that does not exist is not an error.
func RestrictTree(dir string) ([]string, error) {
	var changed []string
	root, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: restrict %s: %w", dir, err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := privateFile & info.Mode().Perm()
		if d.IsDir() {
			want = privateDir
		}
		if info.Mode().Perm() == want {
			return nil
		}
		changed = append(changed, path)
		return os.Chmod(path, want)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return changed, fmt.Errorf("cluster: restrict %s: %w", strings.TrimSuffix(dir, string(filepath.Separator)), err)
	}
	return changed, nil
}
