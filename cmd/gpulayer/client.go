package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// clientFlags are the address, token and TLS flags every command that
// talks to the coordinators takes.
type clientFlags struct {
	addr       string
	token      string
	caFile     string
	clientCert string
	clientKey  string
	profile    string
}

func (c *clientFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.addr, "addr", "http://127.0.0.1:7070", "coordinator URL(s), comma separated")
	fs.StringVar(&c.token, "token", "", "client token (better in the environment than on the command line)")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM bundle to trust for HTTPS")
	fs.StringVar(&c.clientCert, "client-cert", "", "client certificate (PEM) for coordinators that require one")
	fs.StringVar(&c.clientKey, "client-key", "", "key of --client-cert (PEM)")
	fs.StringVar(&c.profile, "profile", "", "the CLI config's profile to take the address, CA, client certificate and token from (default: the config's current one); flags and variables win over it")
}

// errNoToken: a client command was given no token.
var errNoToken = fmt.Errorf("no token: pass --token, set %sTOKEN, or put one in a profile (gpulayer profile set)", envPrefix)

// client connects with the flags of fs, those given neither on the
// command line nor in the environment taken from the profile (profile.go).
func (c *clientFlags) client(fs *pflag.FlagSet) (*client.Client, error) {
	if err := c.applyProfile(fs); err != nil {
		return nil, err
	}
	if c.token == "" {
		return nil, usageError{errNoToken}
	}
	// A person waits at the terminal: FailFast answers within a few
	// seconds when no coordinator has a leader (client.DefaultFailFastWait;
	// a try that gets no answer gives up after
	// client.DefaultFailFastAnswerTimeout), naming every address and what
	// it said (printError); MaxRetryWait still bounds the wait for a
	// rate_limited answer's Retry-After.
	return client.New(client.Config{Addrs: []string{c.addr}, Token: c.token, CAFile: c.caFile, ClientCert: c.clientCert, ClientKey: c.clientKey, MaxRetryWait: 15 * time.Second, FailFast: true})
}

// clientLeaf completes cmd as a command that talks to the coordinators:
// the client flags and out's flags registered (none when nil), and run
// called with a connected client.
func clientLeaf(cmd *cobra.Command, out *outputFlags, run func(*cobra.Command, *client.Client, []string, *outputFlags) error) *cobra.Command {
	var cf clientFlags
	switch {
	case out == nil:
	case out.jsonOnly:
		cmd.Flags().BoolVar(&out.json, "json", false, "print JSON")
	default:
		out.register(cmd.Flags())
	}
	cf.register(cmd.Flags())
	if kind := idKind(cmd); kind != "" && cmd.ValidArgsFunction == nil {
		cmd.ValidArgsFunction = completeIDs(kind, connectFromFlags)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := cf.client(cmd.Flags())
		if err != nil {
			return err
		}
		return run(cmd, c, args, out)
	}
	return cmd
}
