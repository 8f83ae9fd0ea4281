package coordinator

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/internal/atomicfile"
	"github.com/gpulayer/gpulayer/internal/certs"
)

// Without operator certificates (--raft-tls-*), coordinators authenticate
// each other with a cluster key: a secret every coordinator of the
// cluster holds, from which each derives the same CA and issues itself a
// peer certificate (internal/certs). Raft and every call between
// coordinators (forwarding, address registration, artifact copies) then
// run over mutual TLS, so nothing reaches Raft or an internal route
// without the key, loopback included.
//
// The key lives in the data dir as ClusterKeyFileName (0600), or where
// --cluster-key-file says. A coordinator that forms a cluster alone (a
// dev set-up, a first node) makes one at its first start; coordinators
// that form a cluster together or join one need the same key, copied from
// the first.

// ClusterKeyFileName is the cluster key's file in a data dir.
const ClusterKeyFileName = "cluster.key"

// ErrNoClusterKey refuses to start a coordinator that must share a key
// with others and has none.
var ErrNoClusterKey = errors.New("coordinator: coordinators without --raft-tls-* certificates authenticate each other with a shared cluster key, and this one has none: copy " + ClusterKeyFileName + " from the data dir of the cluster's first coordinator into this one's (mode 0600), or give --cluster-key-file, or use --raft-tls-cert/--raft-tls-key/--raft-ca")

// ErrClusterKeyMode refuses a cluster key that others can read.
var ErrClusterKeyMode = errors.New("coordinator: the cluster key file must be readable by its owner only (chmod 0600)")

// clusterKey finds this coordinator's cluster key: Config.ClusterKey, the
// --cluster-key-file, or the data dir's; a coordinator that forms a
// cluster alone makes one when there is none.
func clusterKey(cfg Config) ([]byte, error) {
	if cfg.ClusterKey != nil {
		if len(cfg.ClusterKey) < certs.MinClusterKeyBytes {
			return nil, fmt.Errorf("coordinator: %w", certs.ErrClusterKey)
		}
		return cfg.ClusterKey, nil
	}
	file := cfg.ClusterKeyFile
	if file == "" {
		file = filepath.Join(cfg.DataDir, ClusterKeyFileName)
	}
	key, err := ReadClusterKey(file)
	switch {
	case err == nil:
		return key, nil
	case !errors.Is(err, fs.ErrNotExist) || cfg.ClusterKeyFile != "":
		return nil, err
	case cfg.BootstrapExpect > 1 || len(cfg.Join) > 0:
		return nil, ErrNoClusterKey
	}
	// A data dir with Raft state but no key: a coordinator of an older
	// release, which had none, or one whose key was lost. One that forms
	// alone makes it now; a member of several must be given the
	// cluster's, or it would make a key no other member shares and fail
	// every handshake.
	servers, err := cluster.StoredServers(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if len(servers) > 1 {
		return nil, fmt.Errorf("%w (its data dir holds the state of a cluster of %d coordinators)", ErrNoClusterKey, len(servers))
	}
	return writeClusterKey(file)
}

// InitClusterKey makes the data dir's cluster key if it has none (used by
// `coordinator init`), and returns its path.
func InitClusterKey(dataDir string) (string, error) {
	file := filepath.Join(dataDir, ClusterKeyFileName)
	if _, err := ReadClusterKey(file); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return file, err
	}
	_, err := writeClusterKey(file)
	return file, err
}

func writeClusterKey(file string) ([]byte, error) {
	key, err := certs.NewClusterKey()
	if err != nil {
		return nil, err
	}
	text := base64.StdEncoding.AppendEncode(nil, key)
	if err := atomicfile.Create(file, append(text, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("coordinator: write the cluster key: %w", err)
	}
	return key, nil
}

// ReadClusterKey reads a key file: base64 of at least 32 bytes, a
// regular file (not a link) that only its owner, this process's user, can
// read. The checks are made on the open file, so a file swapped between
// the check and the read is not read.
func ReadClusterKey(file string) ([]byte, error) {
	f, err := openNoFollow(file)
	if err != nil {
		return nil, fmt.Errorf("coordinator: cluster key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("coordinator: cluster key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("coordinator: cluster key %s is not a regular file", file)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is mode %04o", ErrClusterKeyMode, file, fi.Mode().Perm())
	}
	if err := ownedBySelf(fi); err != nil {
		return nil, fmt.Errorf("coordinator: cluster key %s: %w", file, err)
	}
	text, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("coordinator: cluster key: %w", err)
	}
	key, err := base64.StdEncoding.AppendDecode(nil, bytes.TrimSpace(text))
	if err != nil {
		return nil, fmt.Errorf("coordinator: cluster key %s is not base64", file)
	}
	if len(key) < certs.MinClusterKeyBytes {
		return nil, fmt.Errorf("coordinator: cluster key %s: %w", file, certs.ErrClusterKey)
	}
	return key, nil
}
