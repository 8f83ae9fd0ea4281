package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/coordinator/auth"
)

// The CLI's own config file holds named profiles: a cluster's addresses,
// CA bundle, client certificate and token, so that a person who works with
// several clusters names one (--profile, GPULAYER_PROFILE, or the file's
// current one) instead of exporting variables. It holds tokens, so it is
// written 0600 in a 0700 directory and refused, like an ssh key, when its
// group or others may read it or someone else owns it. A flag or a
// variable wins over the profile, which wins over the default.

// cliConfigEnv names the variable that moves the file.
const cliConfigEnv = "GPULAYER_CLI_CONFIG"

// errProfile: the CLI config or a profile in it cannot be used.
var errProfile = errors.New("cli config")

// profileNamePattern is the grammar of a profile's name.
var profileNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// profile is one cluster's client settings; the TOML keys are the flags'.
type profile struct {
	Addr       string `toml:"addr,omitempty" json:"addr,omitempty"`
	CAFile     string `toml:"ca-file,omitempty" json:"ca_file,omitempty"`
	ClientCert string `toml:"client-cert,omitempty" json:"client_cert,omitempty"`
	ClientKey  string `toml:"client-key,omitempty" json:"client_key,omitempty"`
	Token      string `toml:"token,omitempty" json:"-"`
	// OIDCIssuer and OIDCClientID are what gpulayer login last used.
	OIDCIssuer   string `toml:"oidc-issuer,omitempty" json:"oidc_issuer,omitempty"`
	OIDCClientID string `toml:"oidc-client-id,omitempty" json:"oidc_client_id,omitempty"`
}

// cliConfig is the whole file.
type cliConfig struct {
	Current  string             `toml:"current,omitempty"`
	Profiles map[string]profile `toml:"profiles,omitempty"`
}

// cliConfigPath is where the file is: $GPULAYER_CLI_CONFIG, else
// gpulayer/config.toml in the user's config directory
// ($XDG_CONFIG_HOME, or ~/.config).
func cliConfigPath() (string, error) {
	if p := os.Getenv(cliConfigEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("%w: no config directory (set %s): %w", errProfile, cliConfigEnv, err)
	}
	return filepath.Join(dir, "gpulayer", "config.toml"), nil
}

// loadCLIConfig reads the file at path; a missing file is an empty
// config, one others may read is refused.
func loadCLIConfig(path string) (cliConfig, error) {
	var cfg cliConfig
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, fmt.Errorf("%w %s: %w", errProfile, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return cfg, fmt.Errorf("%w %s: %w", errProfile, path, err)
	}
	if err := checkPrivate(path, fi); err != nil {
		return cfg, err
	}
	md, err := toml.NewDecoder(f).Decode(&cfg)
	if err != nil {
		// A parse error may quote the line holding a token.
		return cfg, fmt.Errorf("%w %s: %s", errProfile, path, auth.Redact(err.Error()))
	}
	if und := md.Undecoded(); len(und) > 0 {
		return cfg, fmt.Errorf("%w %s: unknown key %q (a profile holds addr, ca-file, client-cert, client-key and token)", errProfile, path, auth.Redact(und[0].String()))
	}
	return cfg, nil
}

// checkPrivate refuses a file its group or others may read or write, or
// that neither root nor the user running the command owns.
func checkPrivate(path string, fi fs.FileInfo) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return fmt.Errorf("%w: %s holds tokens and is mode %04o: make it 0600 (chmod 600 %s)", errConfigSecret, path, mode, path)
	}
	if uid, ok := fileOwner(fi); ok && uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("%w: %s holds tokens and is owned by uid %d: make root or uid %d its owner", errConfigSecret, path, uid, os.Geteuid())
	}
	return nil
}

// saveCLIConfig writes cfg to path, 0600, by a rename, its directory made
// 0700 when missing.
func saveCLIConfig(path string, cfg cliConfig) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", errProfile, err)
	}
	tmp, err := os.CreateTemp(dir, ".config.toml.*") // 0600
	if err != nil {
		return fmt.Errorf("%w: %w", errProfile, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// applyProfile fills, from the chosen profile, the client flags of fs
// given neither on the command line nor in the environment. No profile
// asked for and none current leaves them be; one asked for that is
// missing is a usage error.
func (c *clientFlags) applyProfile(fs *pflag.FlagSet) error {
	path, err := cliConfigPath()
	if err != nil {
		if c.profile == "" {
			return nil
		}
		return usageError{err}
	}
	cfg, err := loadCLIConfig(path)
	if err != nil {
		return usageError{err}
	}
	name := c.profile
	if name == "" {
		name = cfg.Current
	}
	if name == "" {
		return nil
	}
	p, ok := cfg.Profiles[name]
	if !ok {
		return usagef("%w %s: no profile %q (gpulayer profile list)", errProfile, path, name)
	}
	for _, f := range []struct {
		flag string
		dst  *string
		val  string
	}{
		{"addr", &c.addr, p.Addr}, {"ca-file", &c.caFile, p.CAFile}, {"client-cert", &c.clientCert, p.ClientCert},
		{"client-key", &c.clientKey, p.ClientKey}, {"token", &c.token, p.Token},
	} {
		fl := fs.Lookup(f.flag)
		if f.val == "" || fl == nil || fl.Changed || len(fl.Annotations[sourceAnnotation]) > 0 {
			continue // the command line or the environment wins
		}
		*f.dst = f.val
	}
	return nil
}
