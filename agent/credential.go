package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpulayer/gpulayer/internal/atomicfile"
)

// CredentialFile is the name, in the data dir, of the persisted worker
// credential (mode 0600).
const CredentialFile = "worker-credential.json"

type persisted struct {
	WorkerID    string `json:"worker_id"`
	WorkerToken string `json:"worker_token"`
}

func loadCredential(dataDir string) (persisted, bool, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, CredentialFile))
	if errors.Is(err, fs.ErrNotExist) {
		return persisted{}, false, nil
	}
	if err != nil {
		return persisted{}, false, fmt.Errorf("read worker credential: %w", err)
	}
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil || p.WorkerID == "" || p.WorkerToken == "" {
		return persisted{}, false, fmt.Errorf("worker credential file %s is corrupt", filepath.Join(dataDir, CredentialFile))
	}
	return p, true, nil
}

func saveCredential(dataDir string, p persisted) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("save worker credential: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dataDir, CredentialFile), b, 0o600); err != nil {
		return fmt.Errorf("save worker credential: %w", err)
	}
	return nil
}
