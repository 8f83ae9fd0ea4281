package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// enrollmentCommand parses the flags every enrollment command takes,
// before or after its positional arguments.
func enrollmentCommand(name string, args []string, extra func(*flag.FlagSet)) (*client.Client, []string, bool, error) {
	fs := flag.NewFlagSet("enrollment "+name, flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if extra != nil {
		extra(fs)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, nil, false, err
	}
	c, err := cf.client()
	if err != nil {
		return nil, nil, false, err
	}
	return c, pos, *asJSON, nil
}

// onePositional returns the single positional argument.
func onePositional(pos []string, what string) (string, error) {
	if len(pos) != 1 {
		return "", fmt.Errorf("give exactly one %s", what)
	}
	return pos[0], nil
}

func clusterSet(ctx context.Context, args []string) error {
	var cidrs string
	c, pos, asJSON, err := enrollmentCommand("cluster set", args, func(fs *flag.FlagSet) {
		fs.StringVar(&cidrs, "cidrs", "", "allowed source networks, comma separated (required)")
	})
	if err != nil {
		return err
	}
	key, err := onePositional(pos, "cluster key")
	if err != nil {
		return err
	}
	cl, err := c.PutCluster(ctx, api.ClusterRequest{ClusterKey: key, AllowedSourceCIDRs: splitList(cidrs)})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cl)
	}
	fmt.Printf("cluster %s: %s\n", cl.ClusterKey, strings.Join(cl.AllowedSourceCIDRs, ","))
	return nil
}

func clusterList(ctx context.Context, args []string) error {
	c, _, asJSON, err := enrollmentCommand("cluster list", args, nil)
	if err != nil {
		return err
	}
	cls, err := c.Clusters(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cls)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tALLOWED SOURCES\tUPDATED")
	for _, cl := range cls {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cl.ClusterKey, strings.Join(cl.AllowedSourceCIDRs, ","), cl.UpdatedAt)
	}
	return tw.Flush()
}

func enrollmentAdd(ctx context.Context, args []string) error {
	var req api.EnrollmentRequest
	c, pos, asJSON, err := enrollmentCommand("add", args, func(fs *flag.FlagSet) {
		fs.StringVar(&req.ClusterKey, "cluster", "", "cluster key (required)")
		fs.StringVar(&req.PublicIP, "public-ip", "", "the address the machine will call from (required)")
	})
	if err != nil {
		return err
	}
	if req.ExternalWorkerKey, err = onePositional(pos, "external worker key"); err != nil {
		return err
	}
	e, err := c.CreateEnrollment(ctx, req)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e)
	}
	fmt.Printf("allowlist row %s: cluster %s, public ip %s, %s\n", e.ExternalWorkerKey, e.ClusterKey, e.PublicIP, e.Status)
	return nil
}

func enrollmentList(ctx context.Context, args []string) error {
	c, _, asJSON, err := enrollmentCommand("list", args, nil)
	if err != nil {
		return err
	}
	es, err := c.Enrollments(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(es)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tCLUSTER\tPUBLIC IP\tSTATUS\tWORKER")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ExternalWorkerKey, e.ClusterKey, e.PublicIP, e.Status, dash(e.WorkerID))
	}
	return tw.Flush()
}

func enrollmentRevoke(ctx context.Context, args []string) error {
	c, pos, asJSON, err := enrollmentCommand("revoke", args, nil)
	if err != nil {
		return err
	}
	key, err := onePositional(pos, "external worker key")
	if err != nil {
		return err
	}
	e, err := c.RevokeEnrollment(ctx, key)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e)
	}
	fmt.Printf("allowlist row %s revoked", e.ExternalWorkerKey)
	if e.WorkerID != "" {
		fmt.Printf(" (worker %s revoked with it)", e.WorkerID)
	}
	fmt.Println()
	return nil
}
