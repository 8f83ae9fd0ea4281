package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/internal/oidclogin"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// loginCmd logs a person in through the cluster's identity provider
// (docs/sso.md): it obtains an ID token as a public client, exchanges it
// at POST /v1/auth/oidc for a client token, and stores that token in a
// profile of the CLI config (0600, profile.go).
func loginCmd() *cobra.Command {
	var cf clientFlags
	var issuer, clientID string
	var device bool
	var scopes []string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "login --issuer URL --client-id ID [--device] [--profile NAME]",
		Short: "log in through the cluster's identity provider and save the client token in a profile",
		Long: `login obtains an OpenID Connect ID token from the identity provider and
exchanges it at the coordinator for a short-lived client token of the team
and roles your groups map to. By default it runs the authorization code
flow with PKCE: it prints a URL to open in a browser and listens on
127.0.0.1 (a port the system picks) for the provider's redirect. With
--device it runs the device flow instead: it prints a URL and a code to
enter on any device, for a terminal with no browser.

The token is saved in the profile named by --profile (default: the
current one, else "default"), with the address, issuer and client id, so
that the next login needs no flags. The file is written mode 0600.`,
		Example: `  gpulayer login --addr https://c1:7070 --issuer https://idp.example/realms/gpu --client-id gpulayer-cli
  gpulayer login --device --profile prod
  gpulayer login --issuer https://example.okta.com --client-id 0oa1b2c3 --scope groups`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return runLogin(ctx, cmd, &cf, loginSettings{issuer: issuer, clientID: clientID, device: device, scopes: scopes})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&issuer, "issuer", "", "identity provider's issuer URL (default: the profile's)")
	fs.StringVar(&clientID, "client-id", "", "the CLI's public client id at the provider, the coordinator's --oidc-audience (default: the profile's)")
	fs.BoolVar(&device, "device", false, "use the device flow (a URL and a code) instead of a browser redirect to 127.0.0.1")
	fs.StringSliceVar(&scopes, "scope", nil, "scopes to ask for besides openid (some providers put groups in the ID token only for a groups scope)")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the login to complete")
	// The client flags but --token: login is how a token is obtained.
	fs.StringVar(&cf.addr, "addr", "http://127.0.0.1:7070", "coordinator URL(s), comma separated (default: the profile's)")
	fs.StringVar(&cf.caFile, "ca-file", "", "PEM bundle to trust for the coordinator's HTTPS")
	fs.StringVar(&cf.clientCert, "client-cert", "", "client certificate (PEM) for coordinators that require one")
	fs.StringVar(&cf.clientKey, "client-key", "", "key of --client-cert (PEM)")
	fs.StringVar(&cf.profile, "profile", "", "the CLI config's profile to save the token in (default: the current one, else \"default\")")
	return cmd
}

type loginSettings struct {
	issuer, clientID string
	device           bool
	scopes           []string
}

func runLogin(ctx context.Context, cmd *cobra.Command, cf *clientFlags, s loginSettings) error {
	path, err := cliConfigPath()
	if err != nil {
		return usageError{err}
	}
	cfg, err := loadCLIConfig(path)
	if err != nil {
		return usageError{err}
	}
	name := cf.profile
	if name == "" {
		name = cfg.Current
	}
	if name == "" {
		name = "default"
	}
	if err := checkProfileName(name); err != nil {
		return err
	}
	prof, exists := cfg.Profiles[name]
	if s.issuer == "" {
		s.issuer = prof.OIDCIssuer
	}
	if s.clientID == "" {
		s.clientID = prof.OIDCClientID
	}
	if s.issuer == "" || s.clientID == "" {
		return usagef("--issuer and --client-id are required (the profile %q holds none yet)", name)
	}
	// The coordinator's address and TLS settings: flags and variables,
	// then an existing profile's.
	if exists {
		cf.profile = name
		if err := cf.applyProfile(cmd.Flags()); err != nil {
			return err
		}
	}

	lc := oidclogin.Config{Issuer: s.issuer, ClientID: s.clientID, Scopes: s.scopes}
	var idToken string
	if s.device {
		idToken, err = oidclogin.Device(ctx, lc, func(d oidclogin.DevicePrompt) { showDevicePrompt(cmd.ErrOrStderr(), d) })
	} else {
		idToken, err = oidclogin.PKCE(ctx, lc, func(u string) {
			fmt.Fprintf(cmd.ErrOrStderr(), "Open this URL in a browser to log in:\n\n  %s\n\nWaiting for the provider to redirect to this machine...\n", u)
		})
	}
	if err != nil {
		return err
	}
	c, err := client.New(client.Config{Addrs: []string{cf.addr}, CAFile: cf.caFile, ClientCert: cf.clientCert, ClientKey: cf.clientKey, MaxRetryWait: 15 * time.Second, FailFast: true})
	if err != nil {
		return err
	}
	var out api.OIDCExchangeResponse
	if err := c.Do(ctx, "POST", api.PathAuthOIDC, api.OIDCExchangeRequest{IDToken: idToken}, &out); err != nil {
		return err
	}
	path, err = editCLIConfig(func(all *cliConfig) error {
		p := all.Profiles[name]
		p.Addr, p.CAFile, p.ClientCert, p.ClientKey = cf.addr, cf.caFile, cf.clientCert, cf.clientKey
		p.OIDCIssuer, p.OIDCClientID = s.issuer, s.clientID
		p.Token = out.Token
		all.Profiles[name] = p
		if all.Current == "" {
			all.Current = name
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(humanOut, "logged in as %s: team %s, roles %s, until %s; token saved in profile %s (%s)\n",
		out.Subject, out.Team, strings.Join(out.Roles, ","), out.ExpiresAt, name, path)
	return nil
}

// showDevicePrompt prints where to go and the code, one per line, so a
// person (or a script) finds them.
func showDevicePrompt(w io.Writer, d oidclogin.DevicePrompt) {
	fmt.Fprintf(w, "To log in, open this URL on any device and enter the code:\n\n  Visit: %s\n  Code:  %s\n", d.VerificationURI, d.UserCode)
	if d.Complete != "" {
		fmt.Fprintf(w, "  (or open %s, which carries the code)\n", d.Complete)
	}
	fmt.Fprintln(w, "\nWaiting for the approval...")
}
