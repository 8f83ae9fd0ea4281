package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/internal/certs"
)

func tlsCmd() *cobra.Command {
	ca := group("ca", "the cluster's certificate authority", "  gpulayer tls ca create --dir /etc/gpulayer/ca", tlsCACreateCmd())
	cert := group("cert", "server and client certificates", "  gpulayer tls cert create --server --additional-dnsname c1.example", tlsCertCreateCmd())
	return group("tls", "certificates for mutual TLS between coordinators",
		"  gpulayer tls ca create\n  gpulayer tls cert create --server --out c1", ca, cert)
}

// tlsCACreateCmd writes a new cluster CA: gpulayer-ca.pem and
// gpulayer-ca-key.pem (0600) in --dir.
func tlsCACreateCmd() *cobra.Command {
	var dir, cluster string
	var days int
	cmd := &cobra.Command{
		Use:     "create [flags]",
		Short:   "write gpulayer-ca.pem and gpulayer-ca-key.pem",
		Example: "  gpulayer tls ca create --dir /etc/gpulayer/ca --cluster prod",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := certs.NewCA(certs.CAOptions{Cluster: cluster, Days: days})
			if err != nil {
				return err
			}
			certFile, keyFile := filepath.Join(dir, certs.CAFile), filepath.Join(dir, certs.CAKeyFile)
			if err := certs.WriteNew(p, certFile, keyFile); err != nil {
				return err
			}
			fmt.Fprintf(humanErr, "CA certificate: %s\nCA key:         %s (keep it offline; it signs coordinators)\n", certFile, keyFile)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dir, "dir", ".", "directory the CA's files are written to")
	fs.IntVar(&days, "days", 1825, "validity in days")
	fs.StringVar(&cluster, "cluster", certs.DefaultCluster, "cluster name (in the CA's subject)")
	return cmd
}

// tlsCertCreateCmd signs a server or client certificate with the CA.
func tlsCertCreateCmd() *cobra.Command {
	var server, client bool
	var caFile, caKey, cluster, dir, out string
	var days int
	var dnsNames, ips stringList
	cmd := &cobra.Command{
		Use:   "create [flags] --server|--client",
		Short: "sign a certificate: --server|--client",
		Example: `  gpulayer tls cert create --server --out c1 --additional-dnsname c1.example --additional-ipaddress 10.0.0.11
  gpulayer tls cert create --client`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if server == client {
				return usagef("give exactly one of --server and --client")
			}
			opts := certs.CertOptions{Cluster: cluster, Days: days, DNSNames: dnsNames, Kind: certs.Server}
			kind := "server"
			if client {
				opts.Kind, kind = certs.Client, "client"
				if len(dnsNames) > 0 || len(ips) > 0 {
					return usagef("--additional-dnsname and --additional-ipaddress are for --server certificates")
				}
			}
			for _, s := range ips {
				ip := net.ParseIP(s)
				if ip == nil {
					return usagef("--additional-ipaddress %q is not an IP address", s)
				}
				opts.IPs = append(opts.IPs, ip)
			}
			caPEM, err := os.ReadFile(caFile)
			if err != nil {
				return fmt.Errorf("read CA: %w (make one with `gpulayer tls ca create`)", err)
			}
			keyPEM, err := os.ReadFile(caKey)
			if err != nil {
				return fmt.Errorf("read CA key: %w", err)
			}
			ca, err := certs.ParseCA(caPEM, keyPEM)
			if err != nil {
				return err
			}
			p, err := certs.NewCert(ca, opts)
			if err != nil {
				return err
			}
			prefix := out
			if prefix == "" {
				prefix = cluster + "-" + kind + "-gpulayer"
			}
			certFile, keyFile := filepath.Join(dir, prefix+".pem"), filepath.Join(dir, prefix+"-key.pem")
			if err := certs.WriteNew(p, certFile, keyFile); err != nil {
				return err
			}
			name := certs.ServerName(cluster)
			if client {
				name = certs.ClientName(cluster)
			}
			fmt.Fprintf(humanErr, "%s certificate for %s: %s\nkey: %s\n", kind, name, certFile, keyFile)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&server, "server", false, "a coordinator certificate: server.<cluster>.gpulayer, localhost, 127.0.0.1 and the extra names; serverAuth and clientAuth")
	fs.BoolVar(&client, "client", false, "a client certificate: client.<cluster>.gpulayer; clientAuth only")
	fs.StringVar(&caFile, "ca", certs.CAFile, "CA certificate")
	fs.StringVar(&caKey, "ca-key", certs.CAKeyFile, "CA key")
	fs.StringVar(&cluster, "cluster", certs.DefaultCluster, "cluster name")
	fs.IntVar(&days, "days", 365, "validity in days (at most the CA's)")
	fs.StringVar(&dir, "dir", ".", "directory the files are written to")
	fs.StringVar(&out, "out", "", "file name prefix: writes PREFIX.pem and PREFIX-key.pem (default <cluster>-server-gpulayer or <cluster>-client-gpulayer)")
	fs.Var(&dnsNames, "additional-dnsname", "extra DNS name for a server certificate (repeatable or comma separated)")
	fs.Var(&ips, "additional-ipaddress", "extra IP address for a server certificate (repeatable or comma separated)")
	return cmd
}

// stringList collects a repeatable, comma-separated flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Type() string   { return "strings" }

func (l *stringList) Set(s string) error {
	*l = append(*l, splitList(s)...)
	return nil
}
