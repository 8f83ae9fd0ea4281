package main

import (
	"flag"
	"fmt"
	"github.com/gpulayer/gpulayer/sdk/client"
	"os"
	"time"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// clientFlags are the address and token every client command takes.
type clientFlags struct {
	addr       string
	token      string
	caFile     string
	clientCert string
	clientKey  string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", envOr("GPULAYER_ADDR", "http://127.0.0.1:7070"), "coordinator URL(s), comma separated (or GPULAYER_ADDR)")
	fs.StringVar(&c.token, "token", "", "client token (default: GPULAYER_TOKEN)")
	fs.StringVar(&c.caFile, "ca-file", envOr("GPULAYER_CA_FILE", ""), "PEM bundle to trust for HTTPS")
	fs.StringVar(&c.clientCert, "client-cert", envOr("GPULAYER_CLIENT_CERT", ""), "client certificate (PEM) for coordinators that require one")
	fs.StringVar(&c.clientKey, "client-key", envOr("GPULAYER_CLIENT_KEY", ""), "key of --client-cert (PEM)")
}

func (c *clientFlags) client() (*client.Client, error) {
	tok := c.token
	if tok == "" {
		tok = os.Getenv("GPULAYER_TOKEN")
	}
	if tok == "" {
		return nil, fmt.Errorf("no token: pass --token or set GPULAYER_TOKEN")
	}
	return client.New(client.Config{Addrs: []string{c.addr}, Token: tok, CAFile: c.caFile, ClientCert: c.clientCert, ClientKey: c.clientKey, MaxRetryWait: 15 * time.Second, FailFast: true})
}

// parseInterspersed parses flags that may come before or after the
// positional arguments ("enrollment add KEY --cluster C"), and returns the
// positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// clientCmd is a command that talks to the coordinators: a flag set with
// the shared address, token and TLS flags already on it.
type clientCmd struct {
	*flag.FlagSet
	cf clientFlags
}

func newClientCmd(name string) *clientCmd {
	c := &clientCmd{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.cf.register(c.FlagSet)
	return c
}

// connect parses args, checks that exactly want positional arguments were
// given (any number when want < 0; what names them in the error) and
// returns a client with them.
func (c *clientCmd) connect(args []string, want int, what string) (*client.Client, []string, error) {
	if err := c.Parse(args); err != nil {
		return nil, nil, err
	}
	if want >= 0 && c.NArg() != want {
		if want == 1 {
			return nil, nil, fmt.Errorf("give exactly one %s", what)
		}
		return nil, nil, fmt.Errorf("give %d arguments: %s", want, what)
	}
	cl, err := c.cf.client()
	if err != nil {
		return nil, nil, err
	}
	return cl, c.Args(), nil
}
