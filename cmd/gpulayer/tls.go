package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/gpulayer/gpulayer/internal/certs"
)

// tlsCACreate writes a new cluster CA: gpulayer-ca.pem and
// gpulayer-ca-key.pem (0600) in --dir.
func tlsCACreate(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("tls ca create", flag.ContinueOnError)
	dir := fs.String("dir", ".", "directory the CA's files are written to")
	days := fs.Int("days", 1825, "validity in days")
	cluster := fs.String("cluster", certs.DefaultCluster, "cluster name (in the CA's subject)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tls ca create takes no arguments, got %q", fs.Args())
	}
	p, err := certs.NewCA(certs.CAOptions{Cluster: *cluster, Days: *days})
	if err != nil {
		return err
	}
	certFile, keyFile := filepath.Join(*dir, certs.CAFile), filepath.Join(*dir, certs.CAKeyFile)
	if err := certs.WriteNew(p, certFile, keyFile); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "CA certificate: %s\nCA key:         %s (keep it offline; it signs coordinators)\n", certFile, keyFile)
	return nil
}

// tlsCertCreate signs a server or client certificate with the CA.
func tlsCertCreate(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("tls cert create", flag.ContinueOnError)
	server := fs.Bool("server", false, "a coordinator certificate: server.<cluster>.gpulayer, localhost, 127.0.0.1 and the extra names; serverAuth and clientAuth")
	client := fs.Bool("client", false, "a client certificate: client.<cluster>.gpulayer; clientAuth only")
	caFile := fs.String("ca", certs.CAFile, "CA certificate")
	caKey := fs.String("ca-key", certs.CAKeyFile, "CA key")
	cluster := fs.String("cluster", certs.DefaultCluster, "cluster name")
	days := fs.Int("days", 365, "validity in days (at most the CA's)")
	dir := fs.String("dir", ".", "directory the files are written to")
	out := fs.String("out", "", "file name prefix: writes PREFIX.pem and PREFIX-key.pem (default <cluster>-server-gpulayer or <cluster>-client-gpulayer)")
	var dnsNames, ips stringList
	fs.Var(&dnsNames, "additional-dnsname", "extra DNS name for a server certificate (repeatable or comma separated)")
	fs.Var(&ips, "additional-ipaddress", "extra IP address for a server certificate (repeatable or comma separated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tls cert create takes no arguments, got %q", fs.Args())
	}
	if *server == *client {
		return errors.New("give exactly one of --server and --client")
	}
	opts := certs.CertOptions{Cluster: *cluster, Days: *days, DNSNames: dnsNames, Kind: certs.Server}
	kind := "server"
	if *client {
		opts.Kind, kind = certs.Client, "client"
		if len(dnsNames) > 0 || len(ips) > 0 {
			return errors.New("--additional-dnsname and --additional-ipaddress are for --server certificates")
		}
	}
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			return fmt.Errorf("--additional-ipaddress %q is not an IP address", s)
		}
		opts.IPs = append(opts.IPs, ip)
	}
	caPEM, err := os.ReadFile(*caFile)
	if err != nil {
		return fmt.Errorf("read CA: %w (make one with `gpulayer tls ca create`)", err)
	}
	keyPEM, err := os.ReadFile(*caKey)
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
	prefix := *out
	if prefix == "" {
		prefix = *cluster + "-" + kind + "-gpulayer"
	}
	certFile, keyFile := filepath.Join(*dir, prefix+".pem"), filepath.Join(*dir, prefix+"-key.pem")
	if err := certs.WriteNew(p, certFile, keyFile); err != nil {
		return err
	}
	name := certs.ServerName(*cluster)
	if *client {
		name = certs.ClientName(*cluster)
	}
	fmt.Fprintf(os.Stderr, "%s certificate for %s: %s\nkey: %s\n", kind, name, certFile, keyFile)
	return nil
}

// stringList collects a repeatable, comma-separated flag.
type stringList []string

func (l *stringList) String() string { return fmt.Sprint([]string(*l)) }

func (l *stringList) Set(s string) error {
	*l = append(*l, splitList(s)...)
	return nil
}
