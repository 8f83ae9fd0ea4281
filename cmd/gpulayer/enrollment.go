package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func enrollmentCmd() *cobra.Command {
	cluster := group("cluster", "enrollment clusters and their source networks",
		"  gpulayer enrollment cluster set lab --cidrs 203.0.113.0/24\n  gpulayer enrollment cluster list",
		clusterSetCmd(), clusterListCmd())
	return group("enrollment", "allowlist enrollment without tokens (admin)",
		"  gpulayer enrollment add vm-1 --cluster lab --public-ip 203.0.113.5\n  gpulayer enrollment list",
		cluster, enrollmentAddCmd(), enrollmentListCmd(), enrollmentRevokeCmd())
}

func clusterSetCmd() *cobra.Command {
	var cidrs string
	cmd := clientLeaf(&cobra.Command{
		Use:     "set [flags] CLUSTER --cidrs A,B",
		Short:   "create a cluster or replace its networks",
		Example: "  gpulayer enrollment cluster set lab --cidrs 203.0.113.0/24,198.51.100.0/24",
		Args:    exactArgs(1, "cluster key"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		cl, err := c.PutCluster(cmd.Context(), api.ClusterRequest{ClusterKey: args[0], AllowedSourceCIDRs: splitList(cidrs)})
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(cl)
		}
		fmt.Fprintf(humanOut, "cluster %s: %s\n", cl.ClusterKey, strings.Join(cl.AllowedSourceCIDRs, ","))
		return nil
	})
	cmd.Flags().StringVar(&cidrs, "cidrs", "", "allowed source networks, comma separated (required)")
	return cmd
}

func clusterListCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list clusters",
		Example: "  gpulayer enrollment cluster list\n  gpulayer enrollment cluster list -o json",
		Args:    noArgs,
	}, false, func(ctx context.Context, c *client.Client, _ []string) ([]api.Cluster, error) {
		return c.Clusters(ctx)
	}, func(w io.Writer, cls []api.Cluster, wide bool) {
		row(w, "CLUSTER", "ALLOWED SOURCES", "UPDATED")
		for _, cl := range cls {
			row(w, cl.ClusterKey, commaList(cl.AllowedSourceCIDRs), when(cl.UpdatedAt, wide))
		}
	})
}

func enrollmentAddCmd() *cobra.Command {
	var req api.EnrollmentRequest
	cmd := clientLeaf(&cobra.Command{
		Use:     "add [flags] KEY --cluster C --public-ip IP",
		Short:   "allowlist a machine",
		Example: "  gpulayer enrollment add vm-1 --cluster lab --public-ip 203.0.113.5",
		Args:    exactArgs(1, "external worker key"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		req.ExternalWorkerKey = args[0]
		e, err := c.CreateEnrollment(cmd.Context(), req)
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(e)
		}
		fmt.Fprintf(humanOut, "allowlist row %s: cluster %s, public ip %s, %s\n", e.ExternalWorkerKey, e.ClusterKey, e.PublicIP, e.Status)
		return nil
	})
	cmd.Flags().StringVar(&req.ClusterKey, "cluster", "", "cluster key (required)")
	cmd.Flags().StringVar(&req.PublicIP, "public-ip", "", "the address the machine will call from (required)")
	return cmd
}

func enrollmentListCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list allowlist rows",
		Example: "  gpulayer enrollment list\n  gpulayer enrollment list -o wide",
		Args:    noArgs,
	}, false, func(ctx context.Context, c *client.Client, _ []string) ([]api.Enrollment, error) {
		return c.Enrollments(ctx)
	}, func(w io.Writer, es []api.Enrollment, wide bool) {
		head := []string{"KEY", "CLUSTER", "PUBLIC IP", "STATUS", "WORKER"}
		if wide {
			head = append(head, "CREATED", "CREATED BY", "ENROLLED", "REVOKED")
		}
		row(w, head...)
		for _, e := range es {
			cells := []string{e.ExternalWorkerKey, e.ClusterKey, e.PublicIP, e.Status, dash(e.WorkerID)}
			if wide {
				cells = append(cells, dash(e.CreatedAt), dash(e.CreatedBy), dash(e.EnrolledAt), dash(e.RevokedAt))
			}
			row(w, cells...)
		}
	})
}

func enrollmentRevokeCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "revoke [flags] KEY",
		Short:   "revoke a row and the worker enrolled through it",
		Example: "  gpulayer enrollment revoke vm-1",
		Args:    exactArgs(1, "external worker key"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		e, err := c.RevokeEnrollment(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(e)
		}
		fmt.Fprintf(humanOut, "allowlist row %s revoked", e.ExternalWorkerKey)
		if e.WorkerID != "" {
			fmt.Fprintf(humanOut, " (worker %s revoked with it)", e.WorkerID)
		}
		fmt.Fprintln(humanOut)
		return nil
	})
}
