package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// profileCmd manages the CLI config's profiles (profile.go).
func profileCmd() *cobra.Command {
	return group("profile", "named clusters of the CLI's config file: addresses, CA and token",
		"  gpulayer profile set prod --addr https://c1:7070,https://c2:7070 --ca-file ca.pem --token-stdin < token\n  gpulayer profile use prod\n  gpulayer profile list",
		profileSetCmd(), profileListCmd(), profileUseCmd(), profileDeleteCmd())
}

// profileRow is what profile list shows of a profile: never its token.
type profileRow struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	profile
	HasToken bool `json:"has_token"`
}

// noEnvFlags marks every flag of fs as read from no variable: a profile
// stores what the command line says, not what a shell happens to export.
func noEnvFlags(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		_ = fs.SetAnnotation(f.Name, noEnvAnnotation, []string{"a profile stores what the command line says"})
	})
}

// editCLIConfig loads the config, lets edit change it and saves it.
func editCLIConfig(edit func(*cliConfig) error) (string, error) {
	path, err := cliConfigPath()
	if err != nil {
		return "", err
	}
	cfg, err := loadCLIConfig(path)
	if err != nil {
		return "", usageError{err}
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]profile{}
	}
	if err := edit(&cfg); err != nil {
		return "", err
	}
	return path, saveCLIConfig(path, cfg)
}

func checkProfileName(name string) error {
	if !profileNamePattern.MatchString(name) {
		return usagef("profile name %q: want %s", name, profileNamePattern)
	}
	return nil
}

func profileSetCmd() *cobra.Command {
	var p profile
	var tokenStdin bool
	cmd := &cobra.Command{
		Use:   "set NAME [--addr URLS] [--ca-file FILE] [--client-cert FILE --client-key FILE] [--token-stdin]",
		Short: "create or change a profile",
		Long: `set creates the profile NAME, or changes the fields given. The token is
read from stdin (--token-stdin), never from the command line, where every
local user can read it. The first profile made becomes the current one.`,
		Example: `  gpulayer profile set prod --addr https://c1:7070,https://c2:7070 --ca-file /etc/gpulayer/ca.pem --token-stdin < prod.token
  printf %s "$GPULAYER_TOKEN" | gpulayer profile set dev --addr "$GPULAYER_ADDR" --token-stdin`,
		Args: exactArgs(1, "profile name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := checkProfileName(name); err != nil {
				return err
			}
			if tokenStdin {
				tok, err := readToken(cmd.InOrStdin())
				if err != nil {
					return err
				}
				p.Token = tok
			}
			fs := cmd.Flags()
			path, err := editCLIConfig(func(cfg *cliConfig) error {
				cur := cfg.Profiles[name]
				for _, f := range []struct {
					flag     string
					dst, val *string
				}{
					{"addr", &cur.Addr, &p.Addr}, {"ca-file", &cur.CAFile, &p.CAFile},
					{"client-cert", &cur.ClientCert, &p.ClientCert}, {"client-key", &cur.ClientKey, &p.ClientKey},
				} {
					if fs.Changed(f.flag) {
						*f.dst = *f.val
					}
				}
				if tokenStdin {
					cur.Token = p.Token
				}
				cfg.Profiles[name] = cur
				if cfg.Current == "" {
					cfg.Current = name
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(humanOut, "profile %s saved in %s\n", name, path)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&p.Addr, "addr", "", "coordinator URL(s), comma separated")
	fs.StringVar(&p.CAFile, "ca-file", "", "PEM bundle to trust for HTTPS")
	fs.StringVar(&p.ClientCert, "client-cert", "", "client certificate (PEM) for coordinators that require one")
	fs.StringVar(&p.ClientKey, "client-key", "", "key of --client-cert (PEM)")
	fs.BoolVar(&tokenStdin, "token-stdin", false, "read the client token from stdin (its first line)")
	noEnvFlags(fs)
	return cmd
}

// readToken reads a token, the first line of r.
func readToken(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	tok := strings.TrimSpace(line)
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", usagef("--token-stdin: stdin holds no token (one line, no spaces)")
	}
	return tok, nil
}

func profileListCmd() *cobra.Command {
	out := &outputFlags{}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "list the profiles (never their tokens)",
		Example: "  gpulayer profile list\n  gpulayer profile list -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := cliConfigPath()
			if err != nil {
				return err
			}
			cfg, err := loadCLIConfig(path)
			if err != nil {
				return usageError{err}
			}
			rows := make([]profileRow, 0, len(cfg.Profiles))
			for name, p := range cfg.Profiles {
				hasToken := p.Token != ""
				p.Token = ""
				rows = append(rows, profileRow{Name: name, Current: name == cfg.Current, profile: p, HasToken: hasToken})
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
			return out.print(rows, func(w io.Writer, wide bool) {
				if wide {
					row(w, "CURRENT", "NAME", "ADDR", "CA FILE", "CLIENT CERT", "CLIENT KEY", "TOKEN")
				} else {
					row(w, "CURRENT", "NAME", "ADDR", "CA FILE", "TOKEN")
				}
				for _, r := range rows {
					cur, tok := "", "-"
					if r.Current {
						cur = "*"
					}
					if r.HasToken {
						tok = "set"
					}
					if wide {
						row(w, cur, r.Name, dash(r.Addr), dash(r.CAFile), dash(r.ClientCert), dash(r.ClientKey), tok)
					} else {
						row(w, cur, r.Name, dash(r.Addr), dash(r.CAFile), tok)
					}
				}
			})
		},
	}
	out.register(cmd.Flags())
	return cmd
}

func profileUseCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "use NAME",
		Short:   "make NAME the current profile",
		Example: "  gpulayer profile use prod",
		Args:    exactArgs(1, "profile name"),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			_, err := editCLIConfig(func(cfg *cliConfig) error {
				if _, ok := cfg.Profiles[name]; !ok {
					return usagef("%w: no profile %q (gpulayer profile list)", errProfile, name)
				}
				cfg.Current = name
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(humanOut, "profile %s is current\n", name)
			return nil
		},
	}
}

func profileDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Short:   "delete a profile, its token with it",
		Example: "  gpulayer profile delete old",
		Args:    exactArgs(1, "profile name"),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			_, err := editCLIConfig(func(cfg *cliConfig) error {
				if _, ok := cfg.Profiles[name]; !ok {
					return usagef("%w: no profile %q", errProfile, name)
				}
				delete(cfg.Profiles, name)
				if cfg.Current == name {
					cfg.Current = ""
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(humanOut, "profile %s deleted\n", name)
			return nil
		},
	}
}
