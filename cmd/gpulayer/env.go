package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpulayer/gpulayer/sdk/client"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// clientFlags are the address and token every client command takes.
type clientFlags struct {
	addr   string
	token  string
	caFile string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", envOr("GPULAYER_ADDR", "http://127.0.0.1:7070"), "coordinator URL(s), comma separated (or GPULAYER_ADDR)")
	fs.StringVar(&c.token, "token", "", "client token (default: GPULAYER_TOKEN)")
	fs.StringVar(&c.caFile, "ca-file", envOr("GPULAYER_CA_FILE", ""), "PEM bundle to trust for HTTPS")
}

func (c *clientFlags) client() (*client.Client, error) {
	tok := c.token
	if tok == "" {
		tok = os.Getenv("GPULAYER_TOKEN")
	}
	if tok == "" {
		return nil, fmt.Errorf("no token: pass --token or set GPULAYER_TOKEN")
	}
	return client.New(client.Config{Addrs: []string{c.addr}, Token: tok, CAFile: c.caFile, MaxRetryWait: 15 * time.Second})
}
