package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// BootstrapFile is the name, in the data dir, of the credentials written by
// init: hashes only, mode 0600.
const BootstrapFile = "bootstrap-credentials.json"

// ErrAlreadyInitialized is returned by Init for a data dir that holds
// credentials already, unless rotating.
var ErrAlreadyInitialized = errors.New("data dir is already initialised (use --rotate to replace every client and join token)")

// ErrNotInitialized is returned by Run when init was never run.
var ErrNotInitialized = errors.New("data dir is not initialised: run `gpulayer coordinator init` first")

type bootstrapFile struct {
	Generation  int                        `json:"generation"`
	Credentials []command.CredentialRecord `json:"credentials"`
}

// InitTokens are the tokens Init minted; they are shown once.
type InitTokens struct {
	AdminToken string `json:"admin_token"`
	JoinToken  string `json:"join_token"`
}

// Init mints the first admin client token and a join token and stores
// their hashes in dataDir. With rotate it replaces earlier ones: the next
// coordinator start revokes every client and join token and installs these.
func Init(dataDir string, rotate bool, now time.Time) (InitTokens, error) {
	if err := secureDataDir(dataDir, slog.New(slog.DiscardHandler)); err != nil {
		return InitTokens{}, fmt.Errorf("init: %w", err)
	}
	prev, err := readBootstrap(dataDir)
	switch {
	case err == nil && !rotate:
		return InitTokens{}, ErrAlreadyInitialized
	case err != nil && !errors.Is(err, ErrNotInitialized):
		return InitTokens{}, err
	}
	admin, err := auth.Mint(api.PrefixClient)
	if err != nil {
		return InitTokens{}, err
	}
	join, err := auth.Mint(api.PrefixJoin)
	if err != nil {
		return InitTokens{}, err
	}
	now = now.UTC()
	f := bootstrapFile{
		Generation: prev.Generation + 1,
		Credentials: []command.CredentialRecord{
			{ID: admin.Token.ID, Kind: string(auth.KindClient), Name: "admin", Roles: []string{auth.RoleAdmin}, Hash: admin.Hash, CreatedAt: now},
			{ID: join.Token.ID, Kind: string(auth.KindJoin), Name: "default-join", Hash: join.Hash, CreatedAt: now},
		},
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return InitTokens{}, err
	}
	path := filepath.Join(dataDir, BootstrapFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return InitTokens{}, fmt.Errorf("init: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return InitTokens{}, fmt.Errorf("init: %w", err)
	}
	// The key coordinators without operator certificates authenticate
	// each other with; it is kept across --rotate.
	if _, err := InitClusterKey(dataDir); err != nil {
		return InitTokens{}, fmt.Errorf("init: %w", err)
	}
	return InitTokens{AdminToken: admin.Token.String(), JoinToken: join.Token.String()}, nil
}

func readBootstrap(dataDir string) (bootstrapFile, error) {
	return readBootstrapFile(filepath.Join(dataDir, BootstrapFile))
}

func readBootstrapFile(path string) (bootstrapFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return bootstrapFile{}, ErrNotInitialized
	}
	if err != nil {
		return bootstrapFile{}, fmt.Errorf("read bootstrap credentials: %w", err)
	}
	var f bootstrapFile
	if err := json.Unmarshal(b, &f); err != nil {
		return bootstrapFile{}, fmt.Errorf("read bootstrap credentials: %w", err)
	}
	return f, nil
}

// reloadBootstrap imports a newer generation of init's credentials while
// this node leads, so that `coordinator init --rotate` takes effect at once,
// without a restart: every client, join and instance token is replaced,
// worker credentials are untouched. The file is read again only when it
// changed on disk.
func (s *Server) reloadBootstrap(ctx context.Context, log *slog.Logger) {
	path := s.cfg.BootstrapFile
	if path == "" {
		path = filepath.Join(s.cfg.DataDir, BootstrapFile)
	}
	info, err := os.Stat(path)
	if err != nil {
		return
	}
	stamp := info.ModTime().String() + "/" + strconv.FormatInt(info.Size(), 10)
	s.mu.Lock()
	same := stamp == s.bootStamp
	s.bootStamp = stamp
	s.mu.Unlock()
	if same {
		return
	}
	boot, err := readBootstrapFile(path)
	if err != nil {
		log.Warn("re-reading the bootstrap credentials failed", "error", err)
		return
	}
	if boot.Generation <= s.store.BootstrapGeneration() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := state.Propose[bool](ctx, s.Propose, command.ImportBootstrap{Generation: boot.Generation, Credentials: boot.Credentials, Now: s.cfg.Clock.Now().UTC()}); err != nil {
		log.Warn("importing rotated credentials failed; will retry", "error", err)
		s.mu.Lock()
		s.bootStamp = ""
		s.mu.Unlock()
		return
	}
	log.Warn("credentials rotated: every earlier client, join and instance token is revoked", "generation", boot.Generation)
}
